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

// memorySetup runs event.Consumer over the in-memory stores with cfg;
// leased, every consumer the setup starts holds its group's lease, from
// one event.MemoryLeases over the same checkpoints.
func memorySetup(cfg event.Config, leased bool) func(t *testing.T) consumertest.Setup {
	return func(t *testing.T) consumertest.Setup {
		store, checkpoints := eventstore.NewMemory(), event.NewMemoryCheckpoints()
		cfg := cfg
		cfg.Log, cfg.Checkpoints = store, checkpoints
		if leased {
			cfg.Leases = event.NewMemoryLeases(checkpoints)
		}
		return consumertest.Setup{Store: store, Start: func(p *event.Processor, f event.FailureRecorder, notify func(factum.Signal)) func() {
			c := cfg
			c.Failures, c.Notify = f, notify
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
	consumertest.Run(t, memorySetup(event.Config{Backoff: time.Millisecond}, false))
}

func TestConsumerSmallBatches(t *testing.T) {
	consumertest.Run(t, memorySetup(event.Config{Backoff: time.Millisecond, BatchSize: 3, Attempts: 1}, false))
}

// leasedSetup runs event.Consumer over the in-memory stores holding its
// group's lease.
func leasedSetup(t *testing.T) consumertest.Setup {
	return memorySetup(event.Config{Backoff: time.Millisecond, LeaseTTL: 300 * time.Millisecond}, true)(t)
}

func TestLeasedConsumer(t *testing.T) {
	consumertest.Run(t, leasedSetup)
}

func TestLeasedConsumersOneAtATime(t *testing.T) {
	consumertest.RunLeased(t, leasedSetup)
}
