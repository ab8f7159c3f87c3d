package order_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/saga"
)

// BenchmarkFulfilment measures orders placed by 8 clients, each waiting
// for SAGA_HANDLED: the saga has reserved the stock (the reservation is
// decided). ns/op is wall time per order, on the memory store, with the
// saga's consumer on one lane and on four.
func BenchmarkFulfilment(b *testing.B) {
	for _, lanes := range []int{1, 4} {
		b.Run(fmt.Sprintf("saga-lanes=%d", lanes), func(b *testing.B) {
			ctx := context.Background()
			summaries := order.NewSummaries()
			proj, err := summaries.Processor()
			if err != nil {
				b.Fatal(err)
			}
			rt, err := engine.New(engine.Config{
				Store: eventstore.NewMemory(), Processors: []*event.Processor{proj},
				Sagas: []*saga.Saga{order.Fulfilment}, Events: event.Config{Concurrency: lanes},
			}, order.Orders, order.Inventory)
			if err != nil {
				b.Fatal(err)
			}
			if err := rt.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer rt.Shutdown(ctx)
			gw := rt.Gateway()
			if _, err := gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("apple"), order.Restock{Qty: 1 << 30 / 2}), command.Wait(factum.StageProcessed)); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var wg sync.WaitGroup
			var next int64
			var mu sync.Mutex
			for range 8 {
				wg.Go(func() {
					for {
						mu.Lock()
						i := next
						next++
						mu.Unlock()
						if i >= int64(b.N) {
							return
						}
						// Waiting for the saga's SAGA_HANDLED of the
						// reservation's reply is the end of the chain.
						id := fmt.Sprintf("o-%d", i)
						if _, err := gw.SendAndWait(ctx, factum.NewCommand(order.Orders.ID(id), order.PlaceOrder{SKU: "apple", Qty: 1}), command.Wait(factum.StageSagaHandled)); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
