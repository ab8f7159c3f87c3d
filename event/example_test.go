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

	_ = store.Append(ctx, &factum.EventStream{
		ID: factum.NewID(), AggregateID: carts.WithID("cart-1"), Version: 1,
		CommandID: factum.NewID(), RequestID: "req-1", CreateTime: time.Now(),
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: []byte(`{"sku":"sku-1"}`)}},
	})
	fmt.Println(<-handled)
	s := <-signals
	fmt.Println(s.Stage, s.Function, s.Succeeded())
	stop()
	<-done
	// Output:
	// sku-1
	// PROJECTED shop/cart_summary/on_item_added true
}
