package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// syncBuffer is a buffer the server's logger and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// scrapeMetrics reads GET /metrics and parses it with the Prometheus text
// parser.
func scrapeMetrics(t *testing.T, url, key string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(auth.HeaderAPIKey, key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", res.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// metricValue sums the family's samples whose labels include want: the
// counter or gauge value, or a histogram's count.
func metricValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	var sum float64
	found := false
next:
	for _, m := range f.Metric {
		for k, v := range want {
			ok := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					ok = true
				}
			}
			if !ok {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}

// One known load through serve: /metrics counts it, the consumers' lag
// goes to zero once they catch up, and the JSON log lines carry trace IDs
// and neither the API key nor a body.
func TestServeMetricsLogsAndTracesAfterAKnownLoad(t *testing.T) {
	const key = "fk_acme_canary_0123456789abcdefghij"
	const adminKey = "fk_admin_canary_0123456789abcdefghij"
	const skuCanary = "sku-canary-5e1d"
	keys := filepath.Join(t.TempDir(), "api-keys")
	if err := os.WriteFile(keys, []byte(fmt.Sprintf("acme-all %s tenants=acme roles=send,read,operator\nops %s roles=admin\n", auth.HashKey(key), auth.HashKey(adminKey))), 0o600); err != nil {
		t.Fatal(err)
	}
	spans := tracetest.NewInMemoryExporter()
	var logs syncBuffer
	opts := serveOptions{
		Addr: "127.0.0.1:0", storeOptions: storeOptions{Memory: true}, securityOptions: securityOptions{APIKeysFile: keys},
		observeOptions: observeOptions{LogLevel: "info", LogFormat: "json", AccessLog: true, Metrics: true, TraceSample: 1, spans: spans},
	}
	s := startForTest(t, opts, &logs)
	u := s.URL + "/tenant/acme"
	call := func(path, body string) {
		t.Helper()
		status, _, b := callAs(t, "POST", u+path, body, key)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, status, b)
		}
	}
	// With credentials, /metrics spans every tenant: an admin's only.
	for who, want := range map[string]int{"": http.StatusUnauthorized, key: http.StatusForbidden} {
		if status, _, b := callAs(t, "GET", s.URL+"/metrics", "", who); status != want {
			t.Fatalf("/metrics with credential given %t: %d %s, want %d", who != "", status, b, want)
		}
	}
	const orders = 5
	call("/inventory/"+skuCanary+"/restock", `{"qty":100}`)
	for i := range orders {
		call(fmt.Sprintf("/order/o-%d/place_order", i), `{"sku":"`+skuCanary+`","qty":1}`)
	}
	// Every order is placed, reserved and confirmed: 1 + 3 × orders
	// streams, and the consumers (snapshotters, the saga) catch up.
	streams := float64(1 + 3*orders)
	var fams map[string]*dto.MetricFamily
	deadline := time.Now().Add(20 * time.Second)
	for {
		fams = scrapeMetrics(t, s.URL, adminKey)
		appended, _ := metricValue(fams, "factum_store_append_events", map[string]string{"backend": "memory"})
		lag, found := metricValue(fams, "factum_consumer_lag_streams", nil)
		plag, pfound := metricValue(fams, "factum_projection_lag_streams", map[string]string{"projection": "shop/order_summaries", "build": "live"})
		if appended == streams && found && lag == 0 && pfound && plag == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the load: %v streams appended (want %v), lag %v (found %v), projection lag %v (found %v)", appended, streams, lag, found, plag, pfound)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"factum_http_requests_total", map[string]string{"route": "POST /tenant/{tenant}/{aggregate}/{id}/{command}", "status": "200", "method": "POST"}, orders + 1},
		{"factum_http_request_duration_seconds", map[string]string{"route": "POST /tenant/{tenant}/{aggregate}/{id}/{command}"}, orders + 1},
		{"factum_command_wait_duration_seconds", map[string]string{"stage": "PROCESSED", "outcome": "ok"}, orders + 1},
		{"factum_store_append_duration_seconds", map[string]string{"backend": "memory", "outcome": "Ok"}, streams},
		{"factum_consumer_lag_seconds", nil, 0},
		{"factum_compensation_executions", map[string]string{"status": "failed"}, 0},
		{"factum_compensation_read_errors", nil, 0},
		{"factum_projection_lag_read_errors", nil, 0},
		{"factum_commands_waiting", nil, 0},
		{"factum_log_lines_lost_total", nil, 0},
	} {
		got, ok := metricValue(fams, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if f := fams["factum_consumer_lag_streams"]; f == nil || len(f.Metric) < 2 {
		t.Errorf("lag of %v groups, want the snapshotters' and the saga's", f)
	}
	// The logs: the JSON lines parse, the access lines carry trace IDs of
	// recorded spans, and no line holds the key or a body.
	s.logs.Flush()
	text := logs.String()
	if strings.Contains(text, key) || strings.Contains(text, adminKey) || strings.Contains(text, skuCanary) {
		t.Fatalf("the log holds the API key or a body:\n%s", text)
	}
	traces := map[string]bool{}
	for _, sp := range spans.GetSpans() {
		traces[sp.SpanContext.TraceID().String()] = true
	}
	access := 0
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "{") {
			continue // the start-up lines
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if m["msg"] == "http request" && m["route"] == "POST /tenant/{tenant}/{aggregate}/{id}/{command}" {
			access++
			if id, _ := m["trace_id"].(string); !traces[id] {
				t.Errorf("access line without a recorded trace ID: %v", m)
			}
			if id, _ := m["command_id"].(string); id == "" {
				t.Errorf("access line without the command ID: %v", m)
			}
		}
	}
	if access != orders+1 {
		t.Errorf("%d command access lines, want %d:\n%s", access, orders+1, text)
	}
	// A command sent twice with one Idempotency-Key is done once and
	// replayed once; its state was cached by the load.
	for range 2 {
		if status, _, b := callAs(t, "POST", u+"/inventory/"+skuCanary+"/restock", `{"qty":1}`, key, "Idempotency-Key", "ik-1"); status != http.StatusOK {
			t.Fatalf("idempotent restock: %d %s", status, b)
		}
	}
	fams = scrapeMetrics(t, s.URL, adminKey)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"factum_idempotency_key_operations_total", map[string]string{"operation": "begin", "outcome": "created"}, 1},
		{"factum_idempotency_key_operations_total", map[string]string{"operation": "begin", "outcome": "done"}, 1},
		{"factum_idempotency_key_operations_total", map[string]string{"operation": "complete", "outcome": "ok"}, 1},
		// Each new aggregate is a miss; every later command finds its state.
		{"factum_state_cache_lookups_total", map[string]string{"aggregate": "shop.inventory", "result": "miss"}, 1},
		{"factum_state_cache_lookups_total", map[string]string{"aggregate": "shop.inventory", "result": "hit"}, orders + 1},
		{"factum_state_cache_lookups_total", map[string]string{"aggregate": "shop.order", "result": "miss"}, orders},
		{"factum_state_cache_lookups_total", map[string]string{"aggregate": "shop.order", "result": "hit"}, orders},
	} {
		got, ok := metricValue(fams, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
}

// failingLog is an event store whose log cannot be read.
type failingLog struct{ eventstore.Store }

func (failingLog) ReadLog(context.Context, factum.Position, int) ([]factum.EventStream, error) {
	return nil, errors.New("log unreachable")
}

func TestReadinessNamesTheStoresThatFailed(t *testing.T) {
	ok := &server{store: &openedStore{}, events: eventstore.NewMemory(), checkpoints: event.NewMemoryCheckpoints()}
	if err := ok.readiness(context.Background()); err != nil {
		t.Fatalf("healthy stores: %v", err)
	}
	bad := &server{
		store: &openedStore{
			ping: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, // a database that hangs
		},
		events: failingLog{eventstore.NewMemory()}, checkpoints: event.NewMemoryCheckpoints(),
	}
	start := time.Now()
	err := bad.readiness(context.Background())
	if err == nil {
		t.Fatal("ready with a failed log and a hung database")
	}
	msg := err.Error()
	if !strings.Contains(msg, "events: log unreachable") || !strings.Contains(msg, "database") || strings.Contains(msg, "checkpoints") {
		t.Errorf("readiness error %q does not name exactly the failed stores", msg)
	}
	if d := time.Since(start); d > 3*readyTimeout {
		t.Errorf("readiness took %v with a hung database", d)
	}
}

func TestPprofOnlyOnLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:0": true, "[::1]:6060": true, "localhost:6060": true,
		"0.0.0.0:6060": false, ":6060": false, "10.1.2.3:6060": false, "nonsense": false,
	} {
		if err := loopback(addr); (err == nil) != want {
			t.Errorf("loopback(%q) = %v, want accepted %v", addr, err, want)
		}
	}
}

// --trace-spans takes the two levels and refuses anything else before the
// service starts.
func TestServeRefusesAnUnknownSpanLevel(t *testing.T) {
	opts := serveOptions{
		Addr: "127.0.0.1:0", storeOptions: storeOptions{Memory: true},
		observeOptions: observeOptions{LogLevel: "info", LogFormat: "json", Metrics: true, TraceSample: 1, TraceSpans: "everything", spans: tracetest.NewInMemoryExporter()},
	}
	var logs syncBuffer
	s, err := startServer(context.Background(), opts, &logs)
	if err == nil {
		stopServer(t, s)
		t.Fatal("serve started with --trace-spans everything")
	}
	if !strings.Contains(err.Error(), "everything") {
		t.Errorf("error %q does not name the level", err)
	}
}
