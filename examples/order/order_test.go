package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate/aggregatetest"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/saga/sagatest"
)

func TestOrderSpec(t *testing.T) {
	aggregatetest.For(t, order.Orders).
		When(order.PlaceOrder{SKU: "apple", Qty: 2}).
		EventTypes(order.OrderPlaced{}).
		State(order.Order{SKU: "apple", Qty: 2, Status: order.Pending}).
		Version(1).
		Fork("confirmed", func(t *testing.T, s *aggregatetest.Spec[order.Order]) {
			s.When(order.ConfirmOrder{}).EventTypes(order.OrderConfirmed{}).
				State(order.Order{SKU: "apple", Qty: 2, Status: order.Confirmed}).
				Fork("cannot be rejected afterwards", func(t *testing.T, s *aggregatetest.Spec[order.Order]) {
					s.When(order.RejectOrder{Reason: "late"}).Error(factum.CodeIllegalState)
				}).
				Fork("cannot be confirmed twice", func(t *testing.T, s *aggregatetest.Spec[order.Order]) {
					s.When(order.ConfirmOrder{}).Error(factum.CodeIllegalState)
				})
		}).
		Fork("rejected", func(t *testing.T, s *aggregatetest.Spec[order.Order]) {
			s.When(order.RejectOrder{Reason: "no stock"}).EventTypes(order.OrderRejected{}).
				State(order.Order{SKU: "apple", Qty: 2, Status: order.Rejected, Reason: "no stock"}).
				Fork("cannot be confirmed afterwards", func(t *testing.T, s *aggregatetest.Spec[order.Order]) {
					s.When(order.ConfirmOrder{}).Error(factum.CodeIllegalState)
				})
		}).
		Fork("placed twice", func(t *testing.T, s *aggregatetest.Spec[order.Order]) {
			s.When(order.PlaceOrder{SKU: "apple", Qty: 1}).Error(factum.CodeDuplicateAggregateID)
		})
}

func TestOrderRejections(t *testing.T) {
	for name, cmd := range map[string]order.PlaceOrder{
		"no sku":         {Qty: 1},
		"zero quantity":  {SKU: "apple"},
		"too many units": {SKU: "apple", Qty: order.MaxQuantity + 1},
	} {
		t.Run(name, func(t *testing.T) {
			aggregatetest.For(t, order.Orders).When(cmd).Error(factum.CodeIllegalArgument).Version(0)
		})
	}
	aggregatetest.For(t, order.Orders).When(order.ConfirmOrder{}).Error(factum.CodeNotFound)
}

func TestInventorySpec(t *testing.T) {
	aggregatetest.For(t, order.Inventory).
		When(order.Restock{Qty: 5}).Events(order.Restocked{Qty: 5}).
		Fork("reserve within stock", func(t *testing.T, s *aggregatetest.Spec[order.Stock]) {
			s.When(order.ReserveStock{OrderID: "o-1", Qty: 3}).EventTypes(order.StockReserved{}).
				State(order.Stock{Available: 2, Reserved: map[string]int{"o-1": 3}}).
				Fork("same order again refused", func(t *testing.T, s *aggregatetest.Spec[order.Stock]) {
					s.When(order.ReserveStock{OrderID: "o-1", Qty: 1}).Error(factum.CodeIllegalState)
				}).
				Fork("beyond the rest fails as an event", func(t *testing.T, s *aggregatetest.Spec[order.Stock]) {
					s.When(order.ReserveStock{OrderID: "o-2", Qty: 3}).EventTypes(order.ReservationFailed{}).
						State(order.Stock{Available: 2, Reserved: map[string]int{"o-1": 3}})
				})
		}).
		Fork("bad restock", func(t *testing.T, s *aggregatetest.Spec[order.Stock]) {
			s.When(order.Restock{Qty: 0}).Error(factum.CodeIllegalArgument)
		}).
		Fork("bad reservation", func(t *testing.T, s *aggregatetest.Spec[order.Stock]) {
			s.When(order.ReserveStock{Qty: 1}).Error(factum.CodeIllegalArgument)
		})
	// Reserving an unknown SKU records a failure for the saga to answer.
	aggregatetest.For(t, order.Inventory).When(order.ReserveStock{OrderID: "o-1", Qty: 1}).EventTypes(order.ReservationFailed{})
}

func TestFulfilmentSaga(t *testing.T) {
	spec := func() *sagatest.Spec {
		return sagatest.For(t, order.Fulfilment).From(order.Orders.ID("o-1").WithTenant("acme"))
	}
	spec().When(order.OrderPlaced{OrderID: "o-1", SKU: "apple", Qty: 2}).
		ExpectCommands(order.ReserveStock{OrderID: "o-1", Qty: 2}).
		ExpectTargets(order.Inventory.ID("apple").WithTenant("acme"))
	spec().When(order.StockReserved{OrderID: "o-1", SKU: "apple", Qty: 2}).
		ExpectCommands(order.ConfirmOrder{}).
		ExpectTargets(order.Orders.ID("o-1").WithTenant("acme"))
	spec().When(order.ReservationFailed{OrderID: "o-1", SKU: "apple", Qty: 2, Available: 1}).
		ExpectCommands(order.RejectOrder{Reason: "only 1 of apple available, 2 ordered"})
	spec().When(order.Restocked{Qty: 1}).ExpectNone()
}

// newService runs the example on a memory store.
func newService(t *testing.T) (*engine.Engine, *order.Summaries) {
	t.Helper()
	summaries := order.NewSummaries()
	proc, err := summaries.Processor()
	if err != nil {
		t.Fatal(err)
	}
	rt := startOrders(t, engine.Config{Store: eventstore.NewMemory(), Processors: []*event.Processor{proc}})
	return rt, summaries
}

// startOrders runs orders, inventory and the fulfilment saga on cfg until
// the test's clean-up, which fails the test if the shutdown fails.
func startOrders(t *testing.T, cfg engine.Config) *engine.Engine {
	t.Helper()
	cfg.Sagas = append(cfg.Sagas, order.Fulfilment)
	return enginetest.Start(t, cfg, order.Orders, order.Inventory)
}

func waitStatus(t *testing.T, s *order.Summaries, id string, want order.Status) order.Summary {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if v, ok := s.Get(id); ok && v.Status == want {
			return v
		}
		if time.Now().After(deadline) {
			v, _ := s.Get(id)
			t.Fatalf("order %s is %+v, want status %s", id, v, want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestOrdersEndToEnd(t *testing.T) {
	rt, summaries := newService(t)
	ctx := context.Background()
	gw := rt.Gateway()
	if _, err := gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("apple"), order.Restock{Qty: 5}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	// The order is created without an ID: it is derived from the request ID.
	place := factum.NewCommand(order.Orders.Named().WithID(""), order.PlaceOrder{SKU: "apple", Qty: 3}).WithRequestID("checkout-1")
	res, err := gw.SendAndWait(ctx, place, command.Wait(factum.StageProjected))
	if err != nil {
		t.Fatal(err)
	}
	first := res.AggregateID.ID
	if v, ok := summaries.Get(first); !ok || v.Qty != 3 {
		t.Fatalf("after PROJECTED the summary is %+v", v)
	}
	waitStatus(t, summaries, first, order.Confirmed)

	// A retry of the same checkout finds the first order.
	again, err := gw.SendAndWait(ctx, place.WithRequestID("checkout-1"), command.Wait(factum.StageProcessed))
	if err != nil || !again.Duplicate || again.AggregateID.ID != first {
		t.Fatalf("retried checkout = %+v, %v", again, err)
	}

	res, err = gw.SendAndWait(ctx, factum.NewCommand(order.Orders.ID("o-2"), order.PlaceOrder{SKU: "apple", Qty: 3}), command.Wait(factum.StageSagaHandled))
	if err != nil {
		t.Fatal(err)
	}
	v := waitStatus(t, summaries, "o-2", order.Rejected)
	if v.Reason != "only 2 of apple available, 3 ordered" {
		t.Fatalf("rejection reason %q", v.Reason)
	}
	if len(summaries.List()) != 2 {
		t.Fatalf("summaries: %+v", summaries.List())
	}
}
