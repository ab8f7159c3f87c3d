package cart_test

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
)

// The cart served by a runtime over the in-memory store.
func Example() {
	ctx := context.Background()
	carts := cart.New(cart.Items{"sku-1": true}, cart.DefaultLimits)
	rt, err := engine.New(engine.Config{Store: eventstore.NewMemory()}, carts)
	if err != nil {
		panic(err)
	}
	if err := rt.Start(ctx); err != nil {
		panic(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		rt.Shutdown(sctx)
	}()
	gw := rt.Gateway()

	add := factum.NewCommand(carts.ID("cart-42"), cart.AddItem{SKU: "sku-1", Qty: 2}).WithRequestID("req-7")
	res, err := gw.SendAndWait(ctx, add, command.Wait(factum.StageProcessed))
	fmt.Println(res.Stage, res.AggregateVersion, res.EventNames, err)

	// The same request again: its first outcome, not a second stream.
	again := factum.NewCommand(carts.ID("cart-42"), cart.AddItem{SKU: "sku-1", Qty: 2}).WithRequestID("req-7")
	res, err = gw.SendAndWait(ctx, again, command.Wait(factum.StageProcessed))
	fmt.Println(res.Stage, res.AggregateVersion, res.Duplicate, err)

	// A broken rule: a failed PROCESSED with its code.
	_, err = gw.SendAndWait(ctx, factum.NewCommand(carts.ID("cart-42"), cart.AddItem{SKU: "nope", Qty: 1}), command.Wait(factum.StageProcessed))
	fmt.Println(factum.CodeOf(err))

	// Output:
	// PROCESSED 1 [item_added] <nil>
	// PROCESSED 1 true <nil>
	// IllegalArgument
}
