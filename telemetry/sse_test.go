package telemetry_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

// A streamed answer (Server-Sent Events) still flushes through the
// instrumentation, traced or not: the client reads the first event while
// the handler is still running.
func TestStreamsFlushThroughTheInstrumentation(t *testing.T) {
	traced, _, _ := newTraced(t, 1)
	plain, err := telemetry.New(telemetry.Config{Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	for name, tel := range map[string]*telemetry.Telemetry{"traced": traced, "metrics only": plain} {
		t.Run(name, func(t *testing.T) {
			read := make(chan struct{})
			api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte("data: first\n\n"))
				if err := http.NewResponseController(w).Flush(); err != nil {
					t.Errorf("flush: %v", err)
					return
				}
				select {
				case <-read:
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
					t.Error("the client never read the first event: it was not flushed")
				}
			})
			srv := httptest.NewServer(tel.HTTP(api))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/cart/c-1/add_item", nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			line, err := bufio.NewReader(res.Body).ReadString('\n')
			if err != nil || line != "data: first\n" {
				t.Fatalf("first line %q, %v", line, err)
			}
			close(read)
		})
	}
}
