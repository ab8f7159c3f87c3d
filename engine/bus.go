package engine

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// Bus is the command bus as the engine runs it: the gateway sends on it,
// and the engine starts it, asks whether it is quiet while draining, and
// shuts it down. *command.Dispatcher, the in-process bus, implements it; a
// transport (NATS) implements it with the processing on its side.
type Bus interface {
	command.Bus
	// Start starts delivering commands to the processor, under a context
	// derived from ctx.
	Start(ctx context.Context)
	// Idle reports whether no command accepted here is queued or in
	// process.
	Idle() bool
	// Done returns how many commands have finished processing, to tell a
	// round of draining that ran commands from one that ran none.
	Done() uint64
	// Shutdown processes what is queued, or fails it at ctx's end, and
	// stops.
	Shutdown(ctx context.Context) error
}

// NewBus makes the bus of an engine: it delivers commands to proc, which
// emits their PROCESSED signals into signals.
type NewBus func(proc command.Executor, signals command.Sink) (Bus, error)

// DispatcherBus makes the in-process bus, the dispatcher's lanes per cfg:
// the default of Config.Bus (with Config's Lanes, QueueSize,
// RejectWhenFull and MaxRun), exported so that a wrapper (tracing, say)
// can put itself around it.
func DispatcherBus(cfg command.DispatcherConfig) NewBus {
	return func(proc command.Executor, signals command.Sink) (Bus, error) {
		return command.NewDispatcher(proc, signals, cfg)
	}
}

// inProcessBus is the default bus: the dispatcher's lanes, per cfg.
func inProcessBus(cfg Config) NewBus {
	return DispatcherBus(command.DispatcherConfig{
		Lanes: cfg.Lanes, QueueSize: cfg.QueueSize, RejectWhenFull: cfg.RejectWhenFull, MaxRun: cfg.MaxRun,
	})
}

// SendWrapper wraps the Send of the buses that next makes, leaving their
// lifecycle (Start, Idle, Done, Shutdown) as it is: the hook for
// instrumenting the bus hop.
func SendWrapper(next NewBus, wrap func(command.Bus) command.Bus) NewBus {
	return func(proc command.Executor, signals command.Sink) (Bus, error) {
		b, err := next(proc, signals)
		if err != nil {
			return nil, err
		}
		return wrappedBus{Bus: b, send: wrap(b)}, nil
	}
}

// wrappedBus is a Bus whose Send goes through a wrapper.
type wrappedBus struct {
	Bus
	send command.Bus
}

func (b wrappedBus) Send(ctx context.Context, cmd *factum.Command) error {
	return b.send.Send(ctx, cmd)
}
