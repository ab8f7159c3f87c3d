package bustest_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/command/bustest"
)

func newDispatcher(cfg command.DispatcherConfig) bustest.NewBus {
	return func(t *testing.T, proc command.Executor, sink command.Sink) bustest.Harness {
		d, err := command.NewDispatcher(proc, sink, cfg)
		if err != nil {
			t.Fatal(err)
		}
		d.Start(context.Background())
		t.Cleanup(func() { _ = d.Shutdown(context.Background()) })
		return bustest.Harness{Bus: d, Shutdown: d.Shutdown, Capacity: cfg.QueueSize}
	}
}

func TestDispatcher(t *testing.T) {
	bustest.Run(t, newDispatcher(command.DispatcherConfig{Lanes: 8, QueueSize: 16}))
}

func TestDispatcherRejectingWhenFull(t *testing.T) {
	bustest.Run(t, newDispatcher(command.DispatcherConfig{Lanes: 4, QueueSize: 4, RejectWhenFull: true}))
}
