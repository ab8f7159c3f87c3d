package consumertest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/event/consumertest"
	"github.com/factum-go/factum/eventstore"
)

// memorySetup runs event.Consumer over the in-memory stores with cfg.
func memorySetup(cfg event.Config) func(t *testing.T) consumertest.Setup {
	return func(t *testing.T) consumertest.Setup {
		store, checkpoints := eventstore.NewMemory(), event.NewMemoryCheckpoints()
		return consumertest.Setup{Store: store, Start: func(p *event.Processor, f event.FailureRecorder, notify func(factum.Signal)) func() {
			c := cfg
			c.Log, c.Checkpoints, c.Failures, c.Notify = store, checkpoints, f, notify
			consumer, err := event.NewConsumer(p, c)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = consumer.Run(ctx) }()
			var once sync.Once
			stop := func() { once.Do(func() { cancel(); <-done }) }
			t.Cleanup(stop)
			return stop
		}}
	}
}

func TestConsumer(t *testing.T) {
	consumertest.Run(t, memorySetup(event.Config{Backoff: time.Millisecond}))
}

func TestConsumerSmallBatches(t *testing.T) {
	consumertest.Run(t, memorySetup(event.Config{Backoff: time.Millisecond, BatchSize: 3, Attempts: 1}))
}

// leasedSetup runs event.Consumer over the in-memory stores holding its
// group's lease (event.MemoryLeases over the same checkpoints).
func leasedSetup(t *testing.T) consumertest.Setup {
	store, checkpoints := eventstore.NewMemory(), event.NewMemoryCheckpoints()
	leases := event.NewMemoryLeases(checkpoints)
	return consumertest.Setup{Store: store, Start: func(p *event.Processor, f event.FailureRecorder, notify func(factum.Signal)) func() {
		consumer, err := event.NewConsumer(p, event.Config{
			Log: store, Checkpoints: checkpoints, Failures: f, Notify: notify, Backoff: time.Millisecond,
			Leases: leases, LeaseTTL: 300 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = consumer.Run(ctx) }()
		var once sync.Once
		stop := func() { once.Do(func() { cancel(); <-done }) }
		t.Cleanup(stop)
		return stop
	}}
}

func TestLeasedConsumer(t *testing.T) {
	consumertest.Run(t, leasedSetup)
}

func TestLeasedConsumersOneAtATime(t *testing.T) {
	consumertest.RunLeased(t, leasedSetup)
}
