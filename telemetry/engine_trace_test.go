// The engine wired with the telemetry middleware on both pipelines: one
// place_order through the saga is one trace.

package telemetry_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/saga"
	"github.com/factum-go/factum/snapshot"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestEnginePlaceOrderThroughTheSagaIsOneTrace(t *testing.T) {
	tel, exp, _ := newTraced(t, 1)
	rt, err := engine.New(engine.Config{
		Store:             tel.Store(eventstore.NewMemory()),
		SnapshotStore:     snapshot.NewMemory(),
		Sagas:             []*saga.Saga{order.Fulfilment},
		CommandMiddleware: []aggregate.Middleware{tel.Commands()},
		EventMiddleware:   []event.Middleware{tel.Events()},
	}, order.Orders, order.Inventory)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(sctx)
	})
	gw := rt.Gateway()
	if _, err := gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 5}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	res, err := gw.SendAndWait(ctx, factum.NewCommand(order.Orders.ID("o-1"), order.PlaceOrder{SKU: "sku-1", Qty: 2}), command.Wait(factum.StageSagaHandled))
	if err != nil {
		t.Fatal(err)
	}
	// The confirmation is the order's version 2; wait for its process span.
	var spans tracetest.SpanStubs
	deadline := time.Now().Add(10 * time.Second)
	var confirm tracetest.SpanStub
	for confirm.Name == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no confirmation span; spans:\n%v", names(exp.GetSpans()))
		}
		spans = exp.GetSpans()
		for _, s := range spans {
			if v, _ := attr(s, "factum.aggregate.version"); s.Name == "factum.process shop.order" && v.AsInt64() == 2 {
				confirm = s
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := []string{
		"factum.process shop.order", "factum.function shop/fulfilment/",
		"factum.process shop.inventory", "factum.function shop/fulfilment/",
		"factum.process shop.order",
	}
	// A parent span ends after its child (the saga's function sends the
	// confirmation and ends when that returns), so the exporter may hold the
	// confirmation before its ancestors: wait for the whole chain.
	var byID map[trace.SpanID]tracetest.SpanStub
	var got []string
	for len(got) < len(want) {
		if got != nil {
			if time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
			spans = exp.GetSpans()
		}
		byID = map[trace.SpanID]tracetest.SpanStub{}
		for _, s := range spans {
			byID[s.SpanContext.SpanID()] = s
		}
		got = got[:0]
		for s, ok := confirm, true; ok; s, ok = byID[s.Parent.SpanID()] {
			got = append(got, s.Name)
		}
		slices.Reverse(got)
	}
	if len(got) != len(want) {
		t.Fatalf("chain %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("chain %q, want %q", got, want)
		}
	}
	if first := byID[confirm.SpanContext.SpanID()]; first.SpanContext.TraceID() != confirm.SpanContext.TraceID() {
		t.Fatal("the chain crosses traces")
	}
	_ = res
	// The snapshotter's functions continue the trace too; they end on their
	// own consumers, so their spans may come after the confirmation's.
	for snapshots := 0; snapshots == 0; spans = exp.GetSpans() {
		for _, s := range spans {
			if strings.HasPrefix(s.Name, "factum.function shop/") && !strings.Contains(s.Name, "fulfilment") && s.SpanContext.TraceID() == confirm.SpanContext.TraceID() {
				snapshots++
			}
		}
		if snapshots == 0 && time.Now().After(deadline) {
			t.Fatal("no snapshotter span in the trace")
		}
		if snapshots == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func names(spans tracetest.SpanStubs) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.Name + "\n")
	}
	return b.String()
}
