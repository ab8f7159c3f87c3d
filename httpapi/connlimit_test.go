package httpapi_test

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/factum-go/factum/httpapi"
)

// serveLimited serves h on a loopback listener limited to max connections.
func serveLimited(t *testing.T, max int, h http.Handler) (string, *httpapi.ConnLimiter) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := httpapi.NewConnLimiter(max)
	srv := httpapi.NewServer(h, httpapi.ServerConfig{Limiter: lim})
	go func() { _ = srv.Serve(lim.Listen(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), lim
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitClosed reports whether the server closed c within a generous bound.
func waitClosed(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return err == io.EOF || err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func TestConnLimiterEvictsIdleConnections(t *testing.T) {
	addr, lim := serveLimited(t, 3, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	var idle []net.Conn
	for range 3 {
		idle = append(idle, dial(t, addr))
	}
	// A client with a request gets through: the oldest idle connection
	// makes room.
	res, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	if !waitClosed(idle[0]) {
		t.Fatal("the oldest idle connection is still open")
	}
	st := lim.Stats()
	if st.Peak > 3 || st.Evicted < 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestConnLimiterRefusesWhenAllAreBusy(t *testing.T) {
	release := make(chan struct{})
	busy := make(chan struct{}, 2)
	addr, lim := serveLimited(t, 2, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		busy <- struct{}{}
		<-release
	}))
	defer close(release)
	for range 2 {
		c := dial(t, addr)
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		<-busy
	}
	extra := dial(t, addr)
	if !waitClosed(extra) {
		t.Fatal("a connection beyond the cap stayed open while all were busy")
	}
	if st := lim.Stats(); st.Refused < 1 || st.Open > 2 {
		t.Fatalf("stats %+v", st)
	}
}
