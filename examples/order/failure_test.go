package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/internal/compensationtest"
	"github.com/factum-go/factum/saga"
)

// An order for a SKU whose inventory was deleted: the saga's reservation is
// refused. The refusal must be a failed SAGA_HANDLED and a compensation
// record with the refusal's code, not an Ok and an order pending forever
// with nothing recorded.
func TestRefusedSagaCommandIsRecorded(t *testing.T) {
	ctx := context.Background()
	rt, comp := compensationtest.Start(t, compensation.Config{Context: order.Context}, engine.Config{
		Store:  eventstore.NewMemory(),
		Sagas:  []*saga.Saga{order.Fulfilment},
		Events: event.Config{Attempts: 1},
	}, order.Orders, order.Inventory)
	gw := rt.Gateway()
	for _, body := range []any{order.Restock{Qty: 5}, aggregate.DeleteAggregate{}} {
		if _, err := gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("plum"), body), command.Wait(factum.StageProcessed)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := gw.SendAndWait(ctx, factum.NewCommand(order.Orders.ID("o-plum"), order.PlaceOrder{SKU: "plum", Qty: 1}),
		command.Wait(factum.StageSagaHandled).Within(10*time.Second))
	if err == nil || res.Succeeded() {
		t.Fatalf("SAGA_HANDLED = %+v, %v; want the refusal", res, err)
	}
	if res.Code != factum.CodeIllegalAccessDeletedAggregate {
		t.Fatalf("SAGA_HANDLED code = %s (%s), want %s", res.Code, res.Message, factum.CodeIllegalAccessDeletedAggregate)
	}

	svc := comp.Service()
	deadline := time.Now().Add(10 * time.Second)
	for {
		items, err := svc.List(ctx, compensation.Filter{Status: []compensation.Status{compensation.StatusFailed}}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 1 {
			e := items[0].Execution
			if e.Error.Code != factum.CodeIllegalAccessDeletedAggregate {
				t.Fatalf("recorded code = %s (%s)", e.Error.Code, e.Error.Message)
			}
			if e.Aggregate.ID != "o-plum" || e.Function.Processor != "fulfilment" {
				t.Fatalf("recorded %+v", e)
			}
			// The record answers a retried request after a restart.
			streams, err := rt.Store().Load(ctx, e.Aggregate, 1, 1)
			if err != nil || len(streams) != 1 {
				t.Fatal(streams, err)
			}
			found, err := comp.FindFailure(ctx, e.Function, &streams[0])
			if err != nil || factum.CodeOf(found) != factum.CodeIllegalAccessDeletedAggregate {
				t.Fatalf("FindFailure = %v, %v", found, err)
			}
			return
		}
		if len(items) > 1 || time.Now().After(deadline) {
			t.Fatalf("compensation records: %+v", items)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
