package httpapi_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
)

// Event streams through the handler: at most MaxStreams at once, and a
// stream that has nothing to say for IdleTimeout ends long before the
// wait it asked for.
func TestStreamLimitsThroughTheHandler(t *testing.T) {
	f := newFixture(t, func(rc *engine.Config, h *httpapi.Config) {
		// SNAPSHOT is awaited from functions that never signal.
		rc.Consumers = snapshotFns
		h.Streams = httpapi.StreamLimits{MaxStreams: 1, IdleTimeout: 200 * time.Millisecond}
	})
	open := func() *http.Response {
		req, _ := http.NewRequest("POST", f.srv.URL+"/cart/c1/add_item", strings.NewReader(`{"sku":"sku-1","qty":1}`))
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(httpapi.HeaderWaitStage, "SNAPSHOT")
		req.Header.Set(httpapi.HeaderWaitTimeout, "50s")
		res, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := open()
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first stream: %d", first.StatusCode)
	}
	sc := bufio.NewScanner(first.Body)
	for sc.Scan() && sc.Text() != "event: PROCESSED" {
	}
	second := open()
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests || second.Header.Get("Retry-After") == "" {
		t.Fatalf("second stream while the first is open: %d", second.StatusCode)
	}
	// The first stream idles out: its body ends, well before the 50 s
	// wait (the bound here is only a guard against hanging).
	ended := make(chan struct{})
	go func() {
		for sc.Scan() {
		}
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("an idle stream was not ended")
	}
	// Its slot is free again.
	var third *http.Response
	for range 100 {
		if third = open(); third.StatusCode == http.StatusOK {
			break
		}
		third.Body.Close()
		time.Sleep(10 * time.Millisecond)
	}
	defer third.Body.Close()
	if third.StatusCode != http.StatusOK {
		t.Fatalf("a stream after the first ended: %d", third.StatusCode)
	}
}
