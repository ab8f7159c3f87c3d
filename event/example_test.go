package event_test

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

func Example() {
	store := eventstore.NewMemory()
	handled := make(chan string, 1)
	signals := make(chan factum.Signal, 1)
	summary := event.MustProcessor("shop", "cart_summary", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error {
			handled <- e.SKU
			return nil
		}),
	)
	consumer, _ := event.NewConsumer(summary, event.Config{
		Log:         store,
		Checkpoints: event.NewMemoryCheckpoints(),
		Notify:      func(s factum.Signal) { signals <- s },
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { consumer.Run(ctx); close(done) }()

	_ = appendCartItem(ctx, store) // a cart's first stream: one item_added for sku-1
	fmt.Println(<-handled)
	s := <-signals
	fmt.Println(s.Stage, s.Function, s.Succeeded())
	stop()
	<-done
	// Output:
	// sku-1
	// PROJECTED shop/cart_summary/on_item_added true
}

// A middleware around every function of a processor: it sees each
// delivery once, with its final error, after the in-place attempts.
func ExampleWithMiddleware() {
	store := eventstore.NewMemory()
	seen := make(chan string, 1)
	logged := func(h *event.Handler, next event.StreamFunc) event.StreamFunc {
		return func(ctx context.Context, s *factum.EventStream) error {
			err := next(ctx, s)
			seen <- fmt.Sprint(h.Function, " ", s.AggregateID.ID, " ", err)
			return err
		}
	}
	tries := 0
	flaky := event.MustProcessor("shop", "flaky", factum.StageProjected,
		event.WithMiddleware(logged),
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error {
			if tries++; tries < 3 {
				return fmt.Errorf("try %d failed", tries)
			}
			return nil
		}),
	)
	consumer, _ := event.NewConsumer(flaky, event.Config{Log: store, Checkpoints: event.NewMemoryCheckpoints(), Backoff: time.Millisecond})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { consumer.Run(ctx); close(done) }()
	_ = appendCartItem(ctx, store) // a cart's first stream: one item_added for sku-1
	fmt.Println(<-seen, tries)
	stop()
	<-done
	// Output:
	// shop/flaky/on_item_added cart-1 <nil> 3
}
