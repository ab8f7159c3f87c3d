package serveproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configures Start.
type Options struct {
	// Binary is the factum binary (Build's result); required.
	Binary string
	// DataDir is the SQLite data directory; used when PostgresURL is empty.
	DataDir string
	// PostgresURL selects PostgreSQL.
	PostgresURL string
	// Addr is the listen address; default 127.0.0.1:0 (a random loopback
	// port, so serve needs no credentials to start).
	Addr string
	// Args are extra flags for `serve`, after the ones above.
	Args []string
	// StartTimeout bounds the wait for the "listening on" line and a
	// ready /readyz (default 60 s).
	StartTimeout time.Duration
}

// Process is a running `factum serve`.
type Process struct {
	// URL is the base URL it listens on, such as http://127.0.0.1:41234.
	URL string
	// DebugURL is the base of its pprof listener when Args asked for one
	// (--pprof), such as http://127.0.0.1:41235; "" otherwise.
	DebugURL string

	cmd  *exec.Cmd
	done chan struct{}
	err  error // the Wait error, set before done closes
	out  *lockedBuffer
}

// lockedBuffer collects the child's output for diagnostics.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start runs `factum serve` and returns once it listens and /readyz
// answers 200, or with an error carrying the child's output.
func Start(ctx context.Context, opts Options) (*Process, error) {
	if opts.Binary == "" {
		return nil, errors.New("serveproc: Options.Binary is required")
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	args := []string{"serve", "--addr", opts.Addr}
	if opts.PostgresURL != "" {
		args = append(args, "--postgres-url", opts.PostgresURL)
	} else {
		args = append(args, "--data-dir", opts.DataDir)
	}
	args = append(args, opts.Args...)
	cmd := exec.Command(opts.Binary, args...)
	cmd.Env = environWithoutFactum()
	pr, pw := io.Pipe()
	out := &lockedBuffer{}
	cmd.Stdout = pw
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("serveproc: start %s: %w", opts.Binary, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), out: out}
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	urls := make(chan string, 1)
	debugURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(out, line)
			if _, rest, ok := strings.Cut(line, "debug (pprof) on "); ok {
				u, _, _ := strings.Cut(rest, "/debug/")
				debugURL <- u
			}
			if _, rest, ok := strings.Cut(line, "listening on "); ok {
				u, _, _ := strings.Cut(rest, " ")
				select {
				case urls <- u:
				default:
				}
			}
		}
		_, _ = io.Copy(out, pr)
	}()
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	select {
	case p.URL = <-urls:
	case <-p.done:
		return nil, fmt.Errorf("serveproc: serve exited before listening (%v):\n%s", p.err, out)
	case <-ctx.Done():
		p.Kill()
		return nil, fmt.Errorf("serveproc: serve did not listen within %v:\n%s", opts.StartTimeout, out)
	}
	select {
	case p.DebugURL = <-debugURL: // printed before "listening on"
	default:
	}
	if err := p.AwaitReady(ctx); err != nil {
		p.Kill()
		return nil, fmt.Errorf("%w:\n%s", err, out)
	}
	return p, nil
}

// environWithoutFactum is the parent's environment minus FACTUM_*.
func environWithoutFactum() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FACTUM_") {
			env = append(env, kv)
		}
	}
	return env
}

// AwaitReady polls /readyz until it answers 200 or ctx ends.
func (p *Process) AwaitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if Ready(ctx, client, p.URL) == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("serveproc: serve exited (%v)", p.err)
		case <-ctx.Done():
			return fmt.Errorf("serveproc: %s/readyz not ready: %w", p.URL, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Ready asks base/readyz once: nil on 200, an error saying what answered
// otherwise.
func Ready(ctx context.Context, client *http.Client, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return err
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: %d %s", res.StatusCode, bytes.TrimSpace(body))
	}
	return nil
}

// Pid is the child's process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Output is everything the child has written so far.
func (p *Process) Output() string { return p.out.String() }

// Exited reports whether the child has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill sends SIGKILL and waits for the child to be gone: nothing of the
// process survives, as after a crash.
func (p *Process) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM (a graceful drain) and waits up to timeout, then
// kills. It returns the exit error of a child that did not exit cleanly.
func (p *Process) Stop(timeout time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		p.Kill()
		return fmt.Errorf("serveproc: serve did not stop within %v", timeout)
	}
}
