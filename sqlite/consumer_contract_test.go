package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/event/consumertest"
	"github.com/factum-go/factum/sqlite"
)

// event.Consumer over SQLite's log and checkpoints keeps the consumer
// contract.
func TestConsumerContract(t *testing.T) {
	consumertest.Run(t, func(t *testing.T) consumertest.Setup {
		ctx := context.Background()
		db, err := sqlite.Open(ctx, t.TempDir()+"/consumer.db", sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		store, err := sqlite.NewEventStore(ctx, db, "consumertest", sqlite.EventStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkpoints, err := sqlite.NewCheckpointStore(ctx, db, "consumertest")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = checkpoints.Close(); _ = store.Close(); _ = db.Close() })
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
