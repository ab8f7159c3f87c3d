package telemetry_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/telemetry"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// At the per-command level one place_order through the saga is one trace
// of one span per command and per event function, each command's steps
// events on its span and each send an event on its sender's span.
func TestPlaceOrderThroughTheSagaIsOneTracePerCommand(t *testing.T) {
	spans, root := placeOrderTrace(t, telemetry.SpansPerCommand)
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	var last tracetest.SpanStub
	for _, s := range spans {
		if !strings.HasPrefix(s.Name, "factum.process ") && !strings.HasPrefix(s.Name, "factum.function ") && s.Name != "client place_order" {
			t.Errorf("span %q at the per-command level", s.Name)
		}
		if v, _ := attr(s, telemetry.AttrAggregateVersion); s.Name == "factum.process shop.order" && v.AsInt64() == 2 {
			last = s
		}
	}
	var got []string
	for s, ok := last, true; ok; s, ok = byID[s.Parent.SpanID()] {
		got = append(got, s.Name)
	}
	slices.Reverse(got)
	chain := []string{
		"client place_order",
		"factum.process shop.order", "factum.function shop/fulfilment/on_order_placed",
		"factum.process shop.inventory", "factum.function shop/fulfilment/on_stock_reserved",
		"factum.process shop.order",
	}
	if !slices.Equal(got, chain) {
		t.Fatalf("span chain:\n got %q\nwant %q", got, chain)
	}
	if got := byID[root.SpanID()]; got.Name != "client place_order" {
		t.Fatal("the client span is not in the trace")
	}
	events := func(s tracetest.SpanStub) []string {
		var out []string
		for _, e := range s.Events {
			out = append(out, e.Name)
		}
		return out
	}
	for _, s := range spans {
		switch {
		case s.Name == "factum.process shop.order":
			// The new order misses the cache and is loaded; the
			// confirmation finds it cached. A decision and an append that
			// succeed have no event: the span's end marks them.
			var want []string
			if v, _ := attr(s, telemetry.AttrAggregateVersion); v.AsInt64() == 1 {
				want = []string{"factum.load"}
			}
			if !slices.Equal(events(s), want) {
				t.Errorf("%s events %q, want %q", s.Name, events(s), want)
			}
		case strings.HasPrefix(s.Name, "factum.function "):
			if !slices.Equal(events(s), []string{"factum.send"}) {
				t.Errorf("%s events %q, want one send", s.Name, events(s))
			}
		case s.Name == "client place_order":
			if !slices.Equal(events(s), []string{"factum.send"}) {
				t.Errorf("client events %q, want one send", events(s))
			}
		}
	}
	// Each event marks its step's end, in order, within the span.
	for _, s := range spans {
		for i, e := range s.Events {
			if e.Time.Before(s.StartTime) || e.Time.After(s.EndTime) || i > 0 && e.Time.Before(s.Events[i-1].Time) {
				t.Errorf("%s: event %s at %v outside its span or out of order", s.Name, e.Name, e.Time)
			}
		}
	}
}

// A caller's unsampled trace travels with the command: the processor
// records nothing of it, instead of sampling a trace of its own (which
// would leave a trace beginning at the processor).
func TestAnUnsampledCallerIsNotSampledAgain(t *testing.T) {
	for _, level := range []telemetry.SpanLevel{telemetry.SpansPerCommand, telemetry.SpansDetailed} {
		t.Run(level.String(), func(t *testing.T) {
			tel, exp, _ := newTracedAt(t, 1, level)
			p := newPipeline(t, tel)
			unsampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7}, SpanID: trace.SpanID{8}})
			ctx := trace.ContextWithSpanContext(context.Background(), unsampled)
			if _, err := p.gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 5}), command.Wait(factum.StageProcessed)); err != nil {
				t.Fatal(err)
			}
			if spans := exp.GetSpans(); len(spans) != 0 {
				t.Fatalf("%d spans recorded under an unsampled caller: %v", len(spans), names2(spans))
			}
		})
	}
}

func TestParseSpanLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want telemetry.SpanLevel
		ok   bool
	}{
		{"", telemetry.SpansPerCommand, true},
		{"per-command", telemetry.SpansPerCommand, true},
		{"detailed", telemetry.SpansDetailed, true},
		{"all", 0, false},
	} {
		got, err := telemetry.ParseSpanLevel(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSpanLevel(%q) = %v, %v", tc.in, got, err)
		}
		if err == nil && tc.in != "" && got.String() != tc.in {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
	if _, err := telemetry.New(telemetry.Config{Spans: telemetry.SpansDetailed + 1}); err == nil {
		t.Error("New took an unknown span level")
	}
}
