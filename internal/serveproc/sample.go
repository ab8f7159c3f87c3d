package serveproc

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// Sample is one measurement of the child's resources.
type Sample struct {
	// RSSKiB is the resident set size (VmRSS).
	RSSKiB int
	// Threads is the number of OS threads.
	Threads int
	// OpenFiles is the number of open file descriptors (sockets included).
	OpenFiles int
	// Goroutines is the goroutine count from the pprof listener, or -1
	// without one.
	Goroutines int
}

// Sample reads the child's RSS, threads and open files from /proc, and its
// goroutines from /debug/pprof/goroutine when DebugURL is set.
func (p *Process) Sample(ctx context.Context, client *http.Client) (Sample, error) {
	s := Sample{Goroutines: -1}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return s, err
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(value)
		if len(fields) == 0 {
			continue
		}
		switch name {
		case "VmRSS":
			s.RSSKiB, _ = strconv.Atoi(fields[0])
		case "Threads":
			s.Threads, _ = strconv.Atoi(fields[0])
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.Pid()))
	if err != nil {
		return s, err
	}
	s.OpenFiles = len(fds)
	if p.DebugURL == "" {
		return s, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.DebugURL+"/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return s, err
	}
	res, err := client.Do(req)
	if err != nil {
		return s, err
	}
	defer res.Body.Close()
	first, err := bufio.NewReader(io.LimitReader(res.Body, 4096)).ReadString('\n')
	if err != nil {
		return s, fmt.Errorf("goroutine profile: %w", err)
	}
	// "goroutine profile: total 42"
	_, total, ok := strings.Cut(strings.TrimSpace(first), "total ")
	if !ok {
		return s, fmt.Errorf("goroutine profile starts with %q", first)
	}
	s.Goroutines, err = strconv.Atoi(total)
	_, _ = io.Copy(io.Discard, res.Body)
	return s, err
}
