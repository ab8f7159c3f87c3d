package telemetry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape serves the registry's /metrics and parses it with the
// Prometheus text parser.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, rec.Body)
	}
	return fams
}

// sample returns the metric of the family whose labels include want.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// metricCheck is the value a metric should have: a histogram's sample
// count, a counter's or a gauge's value, of the family's metric whose
// labels include labels.
type metricCheck struct {
	name   string
	labels map[string]string
	want   float64
}

// checkMetrics reports each check whose metric fams lacks or holds
// another value.
func checkMetrics(t *testing.T, fams map[string]*dto.MetricFamily, checks []metricCheck) {
	t.Helper()
	for _, c := range checks {
		m := sample(fams, c.name, c.labels)
		if m == nil {
			t.Errorf("%s%v missing", c.name, c.labels)
			continue
		}
		var got float64
		switch {
		case m.Histogram != nil:
			got = float64(m.GetHistogram().GetSampleCount())
		case m.Counter != nil:
			got = m.GetCounter().GetValue()
		case m.Gauge != nil:
			got = m.GetGauge().GetValue()
		}
		if got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

func TestHTTPAccessLogIsJSONWithTheTraceAndNoSecrets(t *testing.T) {
	const canaryKey, canaryBody = "fk_canary_key_3f9a", "canary-body-77c1"
	var logs bytes.Buffer
	logger, err := telemetry.NewLogger(&logs, telemetry.FormatJSON, slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetestExporter(t)
	tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: exp, Sample: 1})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, Registerer: reg, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		// A handler that logs, with the request's context, what it must:
		// never the body or the key.
		logger.InfoContext(r.Context(), "handled", "bytes", len(b))
		w.Header().Set("Command-Id", "cmd-42")
		w.WriteHeader(http.StatusConflict)
	})
	srv := httptest.NewServer(tel.HTTP(api))
	defer srv.Close()
	for _, path := range []string{"/order/o-1/place_order", "/tenant/acme/order/o-2/place_order"} {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(`{"sku":"`+canaryBody+`"}`))
		req.Header.Set("X-Api-Key", canaryKey)
		req.Header.Set("Authorization", "Bearer "+canaryKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if strings.Contains(logs.String(), canaryKey) || strings.Contains(logs.String(), canaryBody) {
		t.Fatalf("a secret or a body reached the log:\n%s", logs.String())
	}
	spans := exp.GetSpans()
	traces := map[string]bool{}
	for _, s := range spans {
		traces[s.SpanContext.TraceID().String()] = true
	}
	var access []map[string]any
	sc := bufio.NewScanner(&logs)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		if id, _ := line["trace_id"].(string); !traces[id] {
			t.Errorf("log line %v has no trace ID of a recorded span (%v)", line, traces)
		}
		if line["msg"] == "http request" {
			access = append(access, line)
		}
	}
	if len(access) != 2 {
		t.Fatalf("%d access lines, want 2:\n%s", len(access), logs.String())
	}
	for i, route := range []string{"POST /{aggregate}/{id}/{command}", "POST /tenant/{tenant}/{aggregate}/{id}/{command}"} {
		a := access[i]
		if a["route"] != route || a["method"] != "POST" || a["status"] != float64(409) || a["command_id"] != "cmd-42" || a["duration"] == nil {
			t.Errorf("access line %v", a)
		}
	}
	// Spans are named by route template, never by path.
	for _, s := range spans {
		if strings.Contains(s.Name, "o-1") || strings.Contains(s.Name, "acme") {
			t.Errorf("span named by a path: %q", s.Name)
		}
	}
	fams := scrape(t, reg)
	if m := sample(fams, "factum_http_requests_total", map[string]string{"route": "POST /{aggregate}/{id}/{command}", "status": "409", "method": "POST"}); m == nil || m.GetCounter().GetValue() != 1 {
		t.Errorf("http requests: %v", m)
	}
	if m := sample(fams, "factum_command_wait_duration_seconds", map[string]string{"stage": "PROCESSED", "outcome": "conflict"}); m == nil || m.GetHistogram().GetSampleCount() != 2 {
		t.Errorf("command waits: %v", m)
	}
	for _, f := range fams {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if strings.Contains(l.GetValue(), "o-1") || strings.Contains(l.GetValue(), "acme") {
					t.Errorf("unbounded label %s=%q on %s", l.GetName(), l.GetValue(), f.GetName())
				}
			}
		}
	}
}

func TestTextLogsAndBadLogOptions(t *testing.T) {
	var b bytes.Buffer
	logger, err := telemetry.NewLogger(&b, telemetry.FormatText, slog.LevelWarn)
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("hidden")
	logger.Warn("shown")
	if strings.Contains(b.String(), "hidden") || !strings.Contains(b.String(), "msg=shown") {
		t.Errorf("text log at warn: %q", b.String())
	}
	if _, err := telemetry.NewLogger(&b, "xml", slog.LevelInfo); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Errorf("format xml: %v", err)
	}
	for _, l := range []string{"debug", "INFO", "warn", "error"} {
		if _, err := telemetry.ParseLevel(l); err != nil {
			t.Errorf("level %s: %v", l, err)
		}
	}
	if _, err := telemetry.ParseLevel("loud"); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Errorf("level loud: %v", err)
	}
}

func TestCommandAndStoreMetricsCountTheLoad(t *testing.T) {
	reg := prometheus.NewRegistry()
	tel, err := telemetry.New(telemetry.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline(t, tel)
	ctx := context.Background()
	const n = 7
	for range n {
		if _, err := p.gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 1}), command.Wait(factum.StageProcessed)); err != nil {
			t.Fatal(err)
		}
	}
	// A stale expected version: a conflict.
	stale := factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 1})
	stale.ExpectedVersion = 1
	if _, err := p.gw.SendAndWait(ctx, stale, command.Wait(factum.StageProcessed)); factum.CodeOf(err) != factum.CodeCommandExpectVersionConflict {
		t.Fatalf("stale: %v", err)
	}
	checkMetrics(t, scrape(t, reg), []metricCheck{
		{"factum_command_process_duration_seconds", map[string]string{"aggregate": "shop.inventory", "code": "Ok"}, n},
		{"factum_command_process_duration_seconds", map[string]string{"aggregate": "shop.inventory", "code": "CommandExpectVersionConflict"}, 1},
		{"factum_command_conflicts_total", map[string]string{"aggregate": "shop.inventory", "code": "CommandExpectVersionConflict"}, 1},
		{"factum_store_append_duration_seconds", map[string]string{"backend": "memory", "outcome": "Ok"}, n},
		{"factum_store_append_events", map[string]string{"backend": "memory"}, n},
		{"factum_bus_sends_total", map[string]string{"outcome": "Ok"}, n + 1},
		{"factum_commands_in_flight", nil, 0},
		// The first command loads the new aggregate; the others, the stale
		// one too, find its state cached.
		{"factum_state_cache_lookups_total", map[string]string{"aggregate": "shop.inventory", "result": "miss"}, 1},
		{"factum_state_cache_lookups_total", map[string]string{"aggregate": "shop.inventory", "result": "hit"}, n},
	})
	if _, err := telemetry.New(telemetry.Config{Registerer: reg}); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Errorf("registering the metrics twice: %v", err)
	}
}
