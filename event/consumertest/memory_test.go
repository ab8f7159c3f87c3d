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
