package compensation_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/snapshot"
)

// A projection fails on an order; compensation records the failure, and
// the scheduler retries it once it is due.
func Example() {
	ctx := context.Background()
	clk := newClock() // an injected clock: 2026-03-01 12:00 UTC

	// A projection counting orders, failing on its first call.
	var calls, counted atomic.Int64
	counter := event.MustProcessor("shop", "order_counter", factum.StageProjected,
		event.On(func(context.Context, event.Message, OrderPlaced) error {
			if calls.Add(1) == 1 {
				return errors.New("warehouse offline")
			}
			counted.Add(1)
			return nil
		}))

	// Compensation lives in the application's context, next to its
	// aggregates; its executions' snapshots go to the runtime's store.
	snaps := snapshot.NewMemory()
	comp, err := compensation.New(compensation.Config{Context: "shop", Snapshots: snaps, Now: clk.Now})
	if err != nil {
		panic(err)
	}
	rt, err := engine.New(engine.Config{
		Store: eventstore.NewMemory(), SnapshotStore: snaps,
		Processors: []*event.Processor{counter},
		Failures:   comp, // the consumers' failure recorder
		Events:     event.Config{Attempts: 1, Now: clk.Now},
	}, orders, comp.Type())
	if err != nil {
		panic(err)
	}
	if err := comp.Bind(rt); err != nil { // before Start
		panic(err)
	}
	if err := rt.Start(ctx); err != nil {
		panic(err)
	}
	defer rt.Shutdown(ctx)

	cmd := factum.NewCommand(orders.ID("o-1"), PlaceOrder{SKU: "apple", Qty: 1})
	if _, err := rt.Gateway().SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed)); err != nil {
		panic(err)
	}

	// The failure is recorded before the consumer moves on.
	svc := comp.Service()
	failed := waitList(ctx, svc, compensation.StatusFailed)
	e := failed.Execution
	fmt.Printf("%s %s: %s (retry due at %s)\n", e.Status, e.Function, e.Error.Message, e.DueAt.Format("15:04:05"))

	// Three minutes later the scheduler retries it.
	clk.Advance(3 * time.Minute)
	rep, err := comp.NewScheduler(compensation.SchedulerConfig{}).RunOnce(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("pass: %d due, %d succeeded\n", rep.Due, rep.Succeeded)
	d, err := svc.Get(ctx, failed.ID.ID)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s after %d retry; orders counted: %d\n", d.Execution.Status, d.Execution.Retries, counted.Load())

	// Output:
	// FAILED shop/order_counter/on_order_placed: warehouse offline (retry due at 12:03:00)
	// pass: 1 due, 1 succeeded
	// SUCCEEDED after 1 retry; orders counted: 1
}

// waitList waits for the query store to show one execution in status.
func waitList(ctx context.Context, svc *compensation.Service, status compensation.Status) compensation.Item {
	for {
		items, err := svc.List(ctx, compensation.Filter{Status: []compensation.Status{status}}, 1)
		if err != nil {
			panic(err)
		}
		if len(items) == 1 {
			return items[0]
		}
		time.Sleep(time.Millisecond)
	}
}

// An event function marks an error it knows retrying cannot fix.
func ExampleWithRecoverability() {
	err := compensation.WithRecoverability(factum.IllegalArgument("sku is not in the catalogue"), compensation.Unrecoverable)
	fmt.Println(compensation.RecoverabilityOf(err), factum.CodeOf(err))
	fmt.Println(compensation.RecoverabilityOf(context.DeadlineExceeded))
	fmt.Println(compensation.RecoverabilityOf(errors.New("something else")))
	// Output:
	// UNRECOVERABLE IllegalArgument
	// RECOVERABLE
	// UNKNOWN
}

func ExampleRetrySpec_Backoff() {
	spec := compensation.DefaultRetrySpec()
	for retries := range 4 {
		fmt.Printf("after retry %d: wait %v\n", retries, spec.Backoff(retries))
	}
	// Output:
	// after retry 0: wait 3m0s
	// after retry 1: wait 6m0s
	// after retry 2: wait 12m0s
	// after retry 3: wait 24m0s
}
