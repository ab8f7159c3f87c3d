package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/factum-go/factum/console"
)

// metricsStub is an API that answers just what the overview reads, and a
// metrics path whose answer the test sets.
type metricsStub struct {
	mu     sync.Mutex
	status int
	body   string
}

func (m *metricsStub) set(status int, body string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status, m.body = status, body
}

func (m *metricsStub) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	w.WriteHeader(m.status)
	_, _ = w.Write([]byte(m.body))
}

// The overview's metrics panel in the states serve does not reach: a
// metrics path that refuses the credential (401, 403), histograms that
// observed nothing and no consumer groups, and a document that is no
// factum metrics at all; each is said, with no JavaScript error.
func TestConsoleMetricsStates(t *testing.T) {
	b := newBrowser(t)
	c, err := console.New(console.Config{Metrics: "/stub/metrics"})
	if err != nil {
		t.Fatal(err)
	}
	stub := &metricsStub{}
	mux := http.NewServeMux()
	mux.Handle(console.DefaultPrefix, c)
	mux.Handle("/stub/metrics", stub)
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}
	}
	mux.Handle("GET /openapi.json", answer(`{"paths":{}}`))
	mux.Handle("GET /principal", answer(`{"open":true,"name":"","admin":true,"roles":[],"tenants":[],"tenant":"default"}`))
	mux.Handle("GET /compensation/counts", answer(`{"failed":0,"prepared":0,"blocked":0,"succeeded":0}`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	empty := strings.Join([]string{
		"# TYPE factum_command_process_duration_seconds histogram",
		`factum_command_process_duration_seconds_bucket{aggregate="shop.cart",code="Ok",le="0.01"} 0`,
		`factum_command_process_duration_seconds_bucket{aggregate="shop.cart",code="Ok",le="+Inf"} 0`,
		`factum_command_process_duration_seconds_sum{aggregate="shop.cart",code="Ok"} 0`,
		`factum_command_process_duration_seconds_count{aggregate="shop.cart",code="Ok"} 0`,
		"# TYPE factum_command_wait_duration_seconds histogram",
		"",
	}, "\n")
	tests := []struct {
		name, body string
		status     int
		ready      string // a JavaScript condition the panel meets
		holds      string // text of the panel
	}{
		{"unauthorized", "unauthorized", http.StatusUnauthorized, `!!document.querySelector('[data-test=metrics-refused]')`, "need a credential"},
		{"forbidden", `{"code":"Forbidden","message":"no"}`, http.StatusForbidden, `!!document.querySelector('[data-test=metrics-refused]')`, "may not read the metrics"},
		{"empty histograms", empty, http.StatusOK, `!!document.querySelector('tr[data-test="aggregate-shop.cart"]')`, "No consumer groups report a lag."},
		{"not factum's metrics", `{"uptime": 3}`, http.StatusOK, `!!document.querySelector('[data-test=raw-metrics]')`, "hold no factum series"},
	}
	for _, tt := range tests {
		stub.set(tt.status, tt.body)
		b.run("overview with "+tt.name, // A query of its own loads the page afresh.
			chromedp.Navigate(srv.URL+"/console/?"+strings.ReplaceAll(tt.name, " ", "-")+"#/overview"),
			until(`document.body.dataset.ready === 'overview' && !!document.querySelector('[data-test=metrics]')`),
			until(tt.ready))
		if got := b.text(`[data-test=metrics]`); !strings.Contains(got, tt.holds) {
			t.Fatalf("%s: the panel says %q, want %q in it", tt.name, got, tt.holds)
		}
		if tt.name == "empty histograms" {
			row := `tr[data-test="aggregate-shop.cart"]`
			if p50, total := b.attr(row, "data-p50"), b.attr(row, "data-total"); p50 != "" || total != "0" {
				t.Fatalf("an empty histogram shows p50 %q over %q commands", p50, total)
			}
			if got := b.text(row + ` td.p50`); got != "—" {
				t.Fatalf("an empty histogram's p50 reads %q", got)
			}
		}
	}
	if errs := b.errors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors in the console log:\n%s", strings.Join(errs, "\n"))
	}
}
