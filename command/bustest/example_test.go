package bustest_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/command/bustest"
)

// A bus proves the contract from one test; this is the in-process
// dispatcher's.
func ExampleRun() {
	_ = func(t *testing.T) {
		bustest.Run(t, func(t *testing.T, proc command.Executor, sink command.Sink) bustest.Harness {
			d, err := command.NewDispatcher(proc, sink, command.DispatcherConfig{Lanes: 8, QueueSize: 16})
			if err != nil {
				t.Fatal(err)
			}
			d.Start(context.Background())
			return bustest.Harness{Bus: d, Shutdown: d.Shutdown, Capacity: 16}
		})
	}
}
