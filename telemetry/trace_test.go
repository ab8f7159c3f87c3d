package telemetry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// newTraced returns a Telemetry recording every span into an in-memory
// exporter.
func newTraced(t testing.TB, sample float64) (*telemetry.Telemetry, *tracetest.InMemoryExporter, *sdktrace.TracerProvider) {
	t.Helper()
	return newTracedAt(t, sample, telemetry.SpansPerCommand)
}

// newTracedAt is newTraced recording the spans of level.
func newTracedAt(t testing.TB, sample float64, level telemetry.SpanLevel) (*telemetry.Telemetry, *tracetest.InMemoryExporter, *sdktrace.TracerProvider) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: exp, Sample: sample})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, Spans: level})
	if err != nil {
		t.Fatal(err)
	}
	return tel, exp, tp
}

func tracetestExporter(t testing.TB) *tracetest.InMemoryExporter {
	t.Helper()
	return tracetest.NewInMemoryExporter()
}

func attr(s tracetest.SpanStub, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// placeOrderTrace runs one place_order through the saga (the order, the
// reservation, the confirmation) under a client span and returns that
// trace's spans.
func placeOrderTrace(t *testing.T, level telemetry.SpanLevel) (tracetest.SpanStubs, trace.SpanContext) {
	t.Helper()
	tel, exp, tp := newTracedAt(t, 1, level)
	p := newPipeline(t, tel)
	ctx := context.Background()
	// Stock, outside the trace.
	if _, err := p.gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 5}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	cctx, client := tp.Tracer("test").Start(ctx, "client place_order")
	res, err := p.gw.SendAndWait(cctx, factum.NewCommand(order.Orders.ID("o-1"), order.PlaceOrder{SKU: "sku-1", Qty: 2}).WithRequestID("req-1"), command.Wait(factum.StageProcessed))
	client.End()
	if err != nil || res.AggregateVersion != 1 {
		t.Fatalf("place_order: %+v %v", res, err)
	}
	hs := p.sagaHandlers(t, tel.Events())
	p.deliver(t, hs, order.Orders.ID("o-1"), 1)      // OrderPlaced: reserve
	p.deliver(t, hs, order.Inventory.ID("sku-1"), 2) // StockReserved: confirm
	var spans tracetest.SpanStubs
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID() == client.SpanContext().TraceID() {
			spans = append(spans, s)
		}
	}
	return spans, client.SpanContext()
}

func TestPlaceOrderThroughTheSagaIsOneTraceInDetail(t *testing.T) {
	spans, root := placeOrderTrace(t, telemetry.SpansDetailed)
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	parent := func(s tracetest.SpanStub) string {
		if p, ok := byID[s.Parent.SpanID()]; ok {
			return p.Name
		}
		return ""
	}
	// The chain of spans from the client to the confirmation, each the
	// parent of the next.
	chain := []string{
		"client place_order",
		"factum.send shop.order", "factum.process shop.order", "factum.function shop/fulfilment/*",
		"factum.send shop.inventory", "factum.process shop.inventory", "factum.function shop/fulfilment/*",
		"factum.send shop.order", "factum.process shop.order",
	}
	var processes []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == "factum.process shop.order" {
			processes = append(processes, s)
		}
	}
	if len(processes) != 2 {
		t.Fatalf("%d order process spans, want 2 (place, confirm):\n%s", len(processes), describe(spans, byID))
	}
	// Walk up from the confirmation's process span.
	var last tracetest.SpanStub
	for _, s := range processes {
		if v, _ := attr(s, telemetry.AttrAggregateVersion); v.AsInt64() == 2 {
			last = s
		}
	}
	var got []string
	for s, ok := last, true; ok; s, ok = byID[s.Parent.SpanID()] {
		got = append(got, s.Name)
	}
	slices.Reverse(got)
	if !slices.EqualFunc(got, chain, func(g, w string) bool {
		if p, ok := strings.CutSuffix(w, "*"); ok {
			return strings.HasPrefix(g, p) && len(g) > len(p)
		}
		return g == w
	}) || got[3] == got[6] {
		t.Fatalf("span chain:\n got %q\nwant %q\n%s", got, chain, describe(spans, byID))
	}
	if got := byID[root.SpanID()]; got.Name != "client place_order" {
		t.Fatal("the client span is not in the trace")
	}
	// Every store call in a command's processing is a child of its span.
	appends := 0
	for _, s := range spans {
		if s.Name == "factum.store Append" {
			appends++
			if !strings.HasPrefix(parent(s), "factum.process ") {
				t.Errorf("append under %q", parent(s))
			}
			if v, _ := attr(s, "db.system.name"); v.AsString() != "memory" {
				t.Errorf("append db.system.name %q", v.AsString())
			}
		}
	}
	if appends != 3 {
		t.Errorf("%d appends in the trace, want 3", appends)
	}
	// The processing's steps are children of the process span: the new
	// order is a cache miss, loaded (the store's Load under the load
	// span); every command is decided.
	steps := map[string]int{}
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name, "factum.load "), strings.HasPrefix(s.Name, "factum.decide "):
			steps[s.Name]++
			if !strings.HasPrefix(parent(s), "factum.process ") {
				t.Errorf("%s under %q", s.Name, parent(s))
			}
		case s.Name == "factum.store Load":
			if !strings.HasPrefix(parent(s), "factum.load ") {
				t.Errorf("store Load under %q", parent(s))
			}
		}
	}
	if steps["factum.load shop.order"] != 1 || steps["factum.decide shop.order"] != 2 || steps["factum.decide shop.inventory"] != 1 {
		t.Errorf("step spans %v, want one load and two decides of the order, one decide of the inventory", steps)
	}
	// The first process span names the command, aggregate, version, stage.
	first := processes[0]
	if v, _ := attr(first, telemetry.AttrAggregateVersion); v.AsInt64() != 1 {
		first = processes[1]
	}
	want := map[attribute.Key]string{
		telemetry.AttrAggregate: "shop.order", telemetry.AttrAggregateID: "o-1", telemetry.AttrStage: "PROCESSED",
		telemetry.AttrCode: "Ok", telemetry.AttrRequestID: "req-1", telemetry.AttrCommandName: "place_order",
	}
	for k, w := range want {
		if v, ok := attr(first, k); !ok || v.String() != w {
			t.Errorf("%s = %q, want %q", k, v.String(), w)
		}
	}
	if v, ok := attr(first, telemetry.AttrCommandID); !ok || v.AsString() == "" {
		t.Error("no command ID on the process span")
	}
	if first.SpanKind != trace.SpanKindConsumer {
		t.Errorf("process span kind %v", first.SpanKind)
	}
	if os.Getenv("FACTUM_WRITE_DOCS") != "" {
		svg := renderTimeline(spans)
		path := filepath.Join("..", "docs", "images", "trace-place-order.svg")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, svg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func describe(spans tracetest.SpanStubs, byID map[trace.SpanID]tracetest.SpanStub) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.Name + " <- " + byID[s.Parent.SpanID()].Name + "\n")
	}
	return b.String()
}

func TestAFailingFunctionMarksItsSpan(t *testing.T) {
	tel, exp, _ := newTraced(t, 1)
	boom := errors.New("projection down")
	h := &event.Handler{Function: factum.Function{Context: "shop", Processor: "summary", Name: "on_placed"}, Stage: factum.StageProjected}
	fn := tel.Events()(h, func(context.Context, *factum.EventStream) error { return boom })
	s := &factum.EventStream{AggregateID: order.Orders.ID("o-1"), Version: 1, CommandID: "c-1"}
	if err := fn(context.Background(), s); !errors.Is(err, boom) {
		t.Fatalf("the middleware returned %v, want the function's error", err)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	sp := spans[0]
	if sp.Status.Code != codes.Error || !strings.Contains(sp.Status.Description, "projection down") {
		t.Errorf("status %+v", sp.Status)
	}
	if len(sp.Events) == 0 || sp.Events[0].Name != "exception" {
		t.Errorf("no exception event: %+v", sp.Events)
	}
	if v, _ := attr(sp, telemetry.AttrStage); v.AsString() != "PROJECTED" {
		t.Errorf("stage %q", v.AsString())
	}
}

func TestTheHeaderCarriesTheTraceAndIsNeverChanged(t *testing.T) {
	tel, _, tp := newTraced(t, 1)
	ctx, span := tp.Tracer("test").Start(context.Background(), "x")
	defer span.End()
	shared := map[string]string{"k": "v"}
	h := tel.Inject(ctx, shared)
	if len(shared) != 1 {
		t.Fatalf("Inject changed the header it was given: %v", shared)
	}
	if h["traceparent"] == "" || h["k"] != "v" {
		t.Fatalf("injected header %v", h)
	}
	got := trace.SpanContextFromContext(tel.Extract(context.Background(), h))
	if got.TraceID() != span.SpanContext().TraceID() || got.SpanID() != span.SpanContext().SpanID() || !got.IsRemote() {
		t.Fatalf("extracted %v, want %v", got, span.SpanContext())
	}
	if h := tel.Inject(context.Background(), shared); h["traceparent"] != "" {
		t.Fatal("a context without a span injected a trace")
	}
}

func TestUnsampledCommandsLeaveNoSpans(t *testing.T) {
	tel, exp, _ := newTraced(t, 0)
	p := newPipeline(t, tel)
	if _, err := p.gw.SendAndWait(context.Background(), factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 5}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans recorded at sample 0", n)
	}
}

func TestContinueOnlyStartsNoTraceButContinuesOne(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: exp, Sample: 0})
	if err != nil {
		t.Fatal(err)
	}
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, ContinueOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline(t, tel)
	ctx := context.Background()
	if _, err := p.gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 5}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans without a caller's trace", n)
	}
	// A caller's sampled trace, in the command's header, is continued.
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	header := tel.Inject(trace.ContextWithRemoteSpanContext(ctx, parent), nil)
	cmd := factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 1})
	cmd.Header = header
	if _, err := p.gw.SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	found := false
	for _, s := range spans {
		if s.Name == "factum.process shop.inventory" && s.SpanContext.TraceID() == parent.TraceID() && s.Parent.SpanID() == parent.SpanID() {
			found = true
		}
	}
	if !found {
		t.Fatalf("the caller's trace was not continued: %v", names2(spans))
	}
}

func names2(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
