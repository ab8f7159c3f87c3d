package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/event/consumertest"
)

// event.Consumer over PostgreSQL's log and checkpoints keeps the consumer
// contract.
func TestConsumerContract(t *testing.T) {
	consumertest.Run(t, func(t *testing.T) consumertest.Setup {
		ctx := context.Background()
		db := newTestDB(t, 8)
		store := newTestEventStore(t, db, "consumertest", EventStoreOptions{})
		checkpoints, err := NewCheckpointStore(ctx, db, "consumertest")
		if err != nil {
			t.Fatal(err)
		}
		return consumertest.Setup{Store: store, Start: func(p *event.Processor, f event.FailureRecorder, notify func(factum.Signal)) func() {
			c, err := event.NewConsumer(p, event.Config{Log: store, Checkpoints: checkpoints, Failures: f, Notify: notify, Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			rctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = c.Run(rctx) }()
			var once sync.Once
			stop := func() { once.Do(func() { cancel(); <-done }) }
			t.Cleanup(stop)
			return stop
		}}
	})
}
