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
	consumertest.Run(t, consumerSetup(false))
}

// Consumers holding their group's lease in PostgreSQL, as instances that
// share the database run them: the plain contract, and one at a time.
func TestLeasedConsumerContract(t *testing.T) {
	consumertest.Run(t, consumerSetup(true))
	consumertest.RunLeased(t, consumerSetup(true))
}

func consumerSetup(leased bool) func(t *testing.T) consumertest.Setup {
	return func(t *testing.T) consumertest.Setup {
		ctx := context.Background()
		db := newTestDB(t, 8)
		store := newTestEventStore(t, db, "consumertest", EventStoreOptions{})
		checkpoints, err := NewCheckpointStore(ctx, db, "consumertest")
		if err != nil {
			t.Fatal(err)
		}
		return consumertest.Setup{Store: store, Start: func(p *event.Processor, f event.FailureRecorder, notify func(factum.Signal)) func() {
			cfg := event.Config{Log: store, Checkpoints: checkpoints, Failures: f, Notify: notify, Backoff: time.Millisecond}
			if leased {
				cfg.Leases, cfg.LeaseTTL = checkpoints, 300*time.Millisecond
			}
			c, err := event.NewConsumer(p, cfg)
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
	}
}
