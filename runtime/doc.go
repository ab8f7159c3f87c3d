// Package runtime wires the command side from a configuration: a gateway
// with its request-ID pre-check and wait routing, the in-process command bus
// (a dispatcher of lanes by aggregate), and a processor per aggregate type,
// all over one event store and one codec registry per runtime.
//
//	rt, err := runtime.New(runtime.Config{Store: store}, Carts)
//	...
//	if err := rt.Start(ctx); err != nil { ... }
//	defer rt.Shutdown(shutdownCtx)
//	res, err := rt.Gateway().SendAndWait(ctx,
//		factum.NewCommand(Carts.ID("cart-42"), AddItem{SKU: "sku-1", Qty: 2}).WithRequestID("req-7"),
//		command.Wait(factum.StageProcessed))
//
// Shutdown closes admission at once, drains every accepted command in
// order and stops at the caller's deadline.
package runtime
