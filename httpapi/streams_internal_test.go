package httpapi

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockingStream writes one event, signals started, then holds the stream
// until its context ends.
func blockingStream(started chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("event: SENT\ndata: {}\n\n"))
		_ = http.NewResponseController(w).Flush()
		started <- struct{}{}
		<-r.Context().Done()
	})
}

func TestStreamGateCapsConcurrentStreams(t *testing.T) {
	g := newStreamGate(StreamLimits{MaxStreams: 2, IdleTimeout: time.Hour})
	started := make(chan struct{}, 3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.serve(w, r, blockingStream(started))
	}))
	t.Cleanup(srv.Close)
	var open []*http.Response
	t.Cleanup(func() {
		for _, r := range open {
			r.Body.Close()
		}
	})
	for range 2 {
		res, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, res)
		<-started
	}
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("third stream: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	// A slot comes back when a stream ends.
	open[0].Body.Close()
	open = open[1:]
	var ok bool
	for range 200 {
		res, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode == http.StatusOK {
			open = append(open, res)
			ok = true
			break
		}
		res.Body.Close()
		time.Sleep(10 * time.Millisecond)
	}
	if !ok {
		t.Fatal("no slot came back after a stream ended")
	}
}

func TestStreamGateEndsIdleStreams(t *testing.T) {
	g := newStreamGate(StreamLimits{MaxStreams: 1, IdleTimeout: 50 * time.Millisecond})
	started := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer wg.Done()
		g.serve(w, r, blockingStream(started))
	}))
	t.Cleanup(srv.Close)
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	// The body ends (EOF) once the stream idled out: the handler, which
	// waits for its context only, returned.
	sc := bufio.NewScanner(res.Body)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	wg.Wait()
	if !strings.Contains(strings.Join(lines, "\n"), "event: SENT") {
		t.Fatalf("stream %q", lines)
	}
}
