package consumertest_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/event/consumertest"
	"github.com/factum-go/factum/eventstore"
)

// A consumer, its log and its checkpoints prove the contract from one
// test; this is event.Consumer's over the in-memory stores.
func ExampleRun() {
	_ = func(t *testing.T) {
		consumertest.Run(t, func(t *testing.T) consumertest.Setup {
			store, checkpoints := eventstore.NewMemory(), event.NewMemoryCheckpoints()
			return consumertest.Setup{Store: store, Start: func(p *event.Processor, f event.FailureRecorder, notify func(factum.Signal)) func() {
				c, err := event.NewConsumer(p, event.Config{Log: store, Checkpoints: checkpoints, Failures: f, Notify: notify})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); _ = c.Run(ctx) }()
				return func() { cancel(); <-done }
			}}
		})
	}
}
