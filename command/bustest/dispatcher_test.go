package bustest_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
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

// runs makes a kit's processor a command.RunExecutor processing a run
// one command at a time, in order, so that the kit checks the lanes'
// runs: their order per aggregate, back-pressure and draining.
type runs struct{ command.Executor }

func (runs) TakesRuns() bool { return true }

func (r runs) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	for i, c := range cmds {
		if sig, ok := skip(c); ok {
			emit(i, sig)
			continue
		}
		emit(i, r.Process(ctx, c))
	}
}

func TestDispatcherWithRuns(t *testing.T) {
	for _, cfg := range []command.DispatcherConfig{
		{Lanes: 8, QueueSize: 16, MaxRun: 8},
		{Lanes: 4, QueueSize: 4, MaxRun: 4, RejectWhenFull: true},
	} {
		bustest.Run(t, func(t *testing.T, proc command.Executor, sink command.Sink) bustest.Harness {
			h := newDispatcher(cfg)(t, runs{proc}, sink)
			// A lane holds a run besides its queue.
			h.Capacity = cfg.QueueSize + cfg.MaxRun - 1
			return h
		})
	}
}
