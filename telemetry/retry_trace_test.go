package telemetry_test

import (
	"context"
	"slices"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A command whose append conflicts (another executor moved the aggregate
// behind this one's cache) is retried: its span shows the failed append
// with its code, the retry, the reload and the second decision, as events
// (per command) or as spans and events (detailed).
func TestARetryIsMarkedOnTheCommandsSpan(t *testing.T) {
	for _, tc := range []struct {
		level  telemetry.SpanLevel
		events []string
		spans  []string // the process span's children, by name
	}{
		{telemetry.SpansPerCommand,
			[]string{"factum.append", "factum.retry", "factum.load"}, nil},
		{telemetry.SpansDetailed,
			[]string{"factum.append.conflict", "factum.retry"},
			[]string{"factum.decide shop.inventory", "factum.store Append", "factum.load shop.inventory", "factum.decide shop.inventory", "factum.store Append"}},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			tel, exp, _ := newTracedAt(t, 1, tc.level)
			restockRetried(t, tel, exp.Reset)
			var process tracetest.SpanStub
			var children []tracetest.SpanStub
			for _, s := range exp.GetSpans() {
				if s.Name == "factum.process shop.inventory" {
					process = s
				}
			}
			for _, s := range exp.GetSpans() {
				if s.Parent.SpanID() == process.SpanContext.SpanID() {
					children = append(children, s)
				}
			}
			slices.SortFunc(children, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
			var got, gotSpans []string
			for _, e := range process.Events {
				got = append(got, e.Name)
			}
			for _, s := range children {
				gotSpans = append(gotSpans, s.Name)
			}
			if !slices.Equal(got, tc.events) || !slices.Equal(gotSpans, tc.spans) {
				t.Fatalf("events %q, children %q; want %q, %q", got, gotSpans, tc.events, tc.spans)
			}
			if v, _ := attr(process, telemetry.AttrRetries); v.AsInt64() != 1 {
				t.Errorf("factum.retries = %v, want 1", v.AsInt64())
			}
			if v, _ := attr(process, telemetry.AttrAggregateVersion); v.AsInt64() != 3 {
				t.Errorf("version %v, want 3", v.AsInt64())
			}
			for _, e := range process.Events {
				if e.Name == "factum.append" || e.Name == "factum.append.conflict" {
					if !slices.ContainsFunc(e.Attributes, func(kv attribute.KeyValue) bool {
						return kv.Key == telemetry.AttrCode && kv.Value.AsString() == string(factum.CodeEventVersionConflict)
					}) {
						t.Errorf("%s attributes %v, want the conflict's code", e.Name, e.Attributes)
					}
				}
			}
		})
	}
}

// restockRetried restocks one inventory three times through an executor
// tel instruments: the first restock caches it at version 1, a second
// through another executor moves it to version 2, behind the cache, and
// the third (after between) conflicts at version 2 and is retried,
// appended at 3 after a reload. Its cache lookups are a miss, a hit and a
// miss.
func restockRetried(t *testing.T, tel *telemetry.Telemetry, between func()) {
	t.Helper()
	mem := eventstore.NewMemory()
	observed, err := order.Inventory.NewExecutor(aggregate.ExecutorConfig{
		Store: tel.Store(mem), Codec: codec.NewRegistry(), Backoff: 1, Middleware: []aggregate.Middleware{tel.Commands()},
	})
	if err != nil {
		t.Fatal(err)
	}
	other, err := order.Inventory.NewExecutor(aggregate.ExecutorConfig{Store: mem, Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	restock(t, observed)
	restock(t, other)
	between()
	restock(t, observed)
}

// restock processes a restock of one unit of inventory sku-1 through p,
// creating it when missing, and fails the test unless it succeeds.
func restock(t *testing.T, p aggregate.Executor) {
	t.Helper()
	cmd := factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 1})
	cmd.AllowCreate = true
	if sig := p.Process(context.Background(), &cmd); !sig.Succeeded() {
		t.Fatalf("%+v", sig)
	}
}

// At the per-command level a decision that succeeds has no event (the
// span's end marks it); one the handler refuses has its factum.decide
// event with the code, and sets the span's status.
func TestARefusedDecisionIsAnEventOnTheCommandsSpan(t *testing.T) {
	tel, exp, _ := newTracedAt(t, 1, telemetry.SpansPerCommand)
	p, err := order.Inventory.NewExecutor(aggregate.ExecutorConfig{
		Store: tel.Store(eventstore.NewMemory()), Codec: codec.NewRegistry(), Middleware: []aggregate.Middleware{tel.Commands()},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := order.Inventory.ID("sku-1")
	for _, qty := range []int{1, 0} { // the second is refused: a restock must be positive
		cmd := factum.NewCommand(id, order.Restock{Qty: qty})
		cmd.AllowCreate = true
		p.Process(context.Background(), &cmd)
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	names := func(s tracetest.SpanStub) []string {
		var out []string
		for _, e := range s.Events {
			out = append(out, e.Name)
		}
		return out
	}
	if got := names(spans[0]); !slices.Equal(got, []string{"factum.load"}) {
		t.Errorf("accepted command's events %q, want only the cache miss's load", got)
	}
	refused := spans[1]
	if got := names(refused); !slices.Equal(got, []string{"factum.decide"}) {
		t.Fatalf("refused command's events %q, want its decision's", got)
	}
	if !slices.ContainsFunc(refused.Events[0].Attributes, func(kv attribute.KeyValue) bool {
		return kv.Key == telemetry.AttrCode && kv.Value.AsString() == string(factum.CodeIllegalArgument)
	}) {
		t.Errorf("decision event attributes %v, want the refusal's code", refused.Events[0].Attributes)
	}
	if refused.Status.Code != codes.Error {
		t.Errorf("refused command's status %v, want an error", refused.Status)
	}
}
