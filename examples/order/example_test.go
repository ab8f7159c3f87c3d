package order_test

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/saga"
)

func Example() {
	summaries := order.NewSummaries()
	proj, _ := summaries.Processor()
	rt, _ := engine.New(engine.Config{
		Store:      eventstore.NewMemory(),
		Processors: []*event.Processor{proj},
		Sagas:      []*saga.Saga{order.Fulfilment},
	}, order.Orders, order.Inventory)
	ctx := context.Background()
	_ = rt.Start(ctx)
	defer rt.Shutdown(ctx)

	gw := rt.Gateway()
	_, _ = gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("apple"), order.Restock{Qty: 1}), command.Wait(factum.StageProcessed))
	_, _ = gw.SendAndWait(ctx, factum.NewCommand(order.Orders.ID("o-1"), order.PlaceOrder{SKU: "apple", Qty: 1}), command.Wait(factum.StageProcessed))
	for { // the saga confirms the order asynchronously
		if s, _ := summaries.Get("o-1"); s.Status == order.Confirmed {
			fmt.Println(s.OrderID, s.SKU, s.Qty, s.Status)
			return
		}
		time.Sleep(time.Millisecond)
	}
	// Output: o-1 apple 1 confirmed
}
