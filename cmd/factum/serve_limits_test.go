package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// closedByServer reports whether the server closed c within bound.
func closedByServer(t *testing.T, c net.Conn, bound time.Duration) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(bound))
	_, err := io.Copy(io.Discard, c)
	if err == nil {
		return true // EOF
	}
	ne, ok := err.(net.Error)
	return !ok || !ne.Timeout()
}

// Item 8: connections are closed: a connection that never sends a request
// after the read-header timeout, a keep-alive one after the idle timeout.
func TestServeClosesSilentAndIdleConnections(t *testing.T) {
	opts := serveOptions{Addr: "127.0.0.1:0"}
	opts.ReadHeaderTimeout, opts.IdleTimeout = 200*time.Millisecond, 300*time.Millisecond
	s, _ := startWith(t, opts)
	addr := strings.TrimPrefix(s.URL, "http://")

	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	half, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer half.Close()
	if _, err := io.WriteString(half, "GET /healthz HTTP/1.1\r\nHost: x\r\n"); err != nil { // headers never finished
		t.Fatal(err)
	}
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if _, err := io.WriteString(idle, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("healthz on the keep-alive connection: %v %v", res, err)
	}
	res.Body.Close()
	for name, c := range map[string]net.Conn{"silent": silent, "half-sent headers": half, "idle keep-alive": idle} {
		if !closedByServer(t, c, 10*time.Second) {
			t.Errorf("the %s connection is still open after 10 s", name)
		}
	}
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// Item 8: a flood of idle connections cannot exhaust the file descriptors
// nor lock out /healthz: the server keeps at most --max-connections open.
func TestServeConnectionFloodIsCapped(t *testing.T) {
	const flood, limit = 3000, 200
	opts := serveOptions{Addr: "127.0.0.1:0"}
	opts.MaxConns = limit
	s, _ := startWith(t, opts)
	addr := strings.TrimPrefix(s.URL, "http://")
	base := openFDs(t)

	conns := make([]net.Conn, 0, flood)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range flood / 10 {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Errorf("dial %d: %v", w, err)
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	// Wait until the server has accepted the whole flood (or, without a
	// cap, until it holds more descriptors than the cap allows).
	bound := base + flood + limit + 50
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := openFDs(t)
		if n > bound {
			t.Fatalf("%d descriptors open for %d client connections: the server holds more than %d", n, flood, limit)
		}
		if st := s.conns.Stats(); int(st.Evicted)+st.Open >= flood || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	st := s.conns.Stats()
	if st.Peak > limit || st.Open > limit {
		t.Fatalf("stats %+v: more than %d connections open", st, limit)
	}
	// /healthz keeps answering on a new connection.
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 5 {
		res, err := c.Get(s.URL + "/healthz")
		if err != nil {
			t.Fatalf("healthz %d during the flood: %v", i, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("healthz %d: %d", i, res.StatusCode)
		}
	}
	if n := openFDs(t); n > bound {
		t.Fatalf("%d descriptors open after the flood", n)
	}
	t.Logf("flood of %d: %+v", flood, s.conns.Stats())
}
