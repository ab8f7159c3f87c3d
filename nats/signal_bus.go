package nats

import (
	"context"
	"maps"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
)

// Bus wraps the buses next makes (nil: the engine's in-process default)
// so that their commands and PROCESSED signals find their way back: every
// command sent here carries this instance's name in factum.OriginHeader
// (replacing any value it had: a saga's command inherits its source
// stream's header, but waits where it is sent), and the PROCESSED signal
// of a command, wherever the bus runs it, names the command's origin, so
// Signal routes it there. Use it as engine.Config.Bus.
func (s *Signals) Bus(next engine.NewBus) engine.NewBus {
	if next == nil {
		next = engine.DispatcherBus(command.DispatcherConfig{})
	}
	only := map[string]string{factum.OriginHeader: s.cfg.Instance}
	stamped := engine.SendWrapper(next, func(b command.Bus) command.Bus {
		return originBus{next: b, instance: s.cfg.Instance, only: only}
	})
	return func(proc command.Executor, signals command.Sink) (engine.Bus, error) {
		return stamped(originExecutor(proc, originHeader{only: only, origin: s.cfg.Instance}), signals)
	}
}

// Stamp sets cmd's origin to instance, copying the header rather than
// changing a map the caller may share.
func Stamp(cmd *factum.Command, instance string) {
	if cmd.Header[factum.OriginHeader] == instance {
		return
	}
	h := make(map[string]string, len(cmd.Header)+1)
	maps.Copy(h, cmd.Header)
	h[factum.OriginHeader] = instance
	cmd.Header = h
}

// originBus stamps every command it sends with its instance. A command
// without a header gets only, one map shared by all of them: factum never
// writes a header in place, so sharing it is safe and spares the
// allocation per command.
type originBus struct {
	next     command.Bus
	instance string
	only     map[string]string
}

func (b originBus) Send(ctx context.Context, cmd *factum.Command) error {
	if len(cmd.Header) == 0 {
		cmd.Header = b.only
	} else {
		Stamp(cmd, b.instance)
	}
	return b.next.Send(ctx, cmd)
}

// originExecutor returns proc with its PROCESSED signals naming the
// command's origin, keeping proc's runs (command.RunExecutor), so that a
// bus still commits a run of commands together, and its cache
// invalidation (aggregate.Forgetter), for a bus that forgets the states of
// partitions it gives up. A command whose header is the origin-only one
// and that finds no observer in its context gets hw there, so that it
// appends a stream keeping the shared origin-only map rather than a copy
// (see originHeader); the NATS bus puts its own in every command's
// context, so only such a command of another bus (the in-process
// dispatcher) pays for the context, and a command with a header of its
// own, whose stream gets a copy anyway, pays nothing.
func originExecutor(proc command.Executor, hw originHeader) command.Executor {
	o := origin{proc, hw}
	f, forgets := proc.(aggregate.Forgetter)
	r, runs := proc.(command.RunExecutor)
	switch {
	case runs && forgets:
		return forgettingRunOrigin{runOrigin{o, r}, f}
	case runs:
		return runOrigin{o, r}
	case forgets:
		return forgettingOrigin{o, f}
	}
	return o
}

type origin struct {
	next command.Executor
	hw   originHeader
}

func (o origin) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	if o.hw.keeps(cmd.Header) && aggregate.CacheObserverFrom(ctx) == nil {
		ctx = &aggregate.ObservedContext{Context: ctx, Observer: o.hw}
	}
	return o.named(cmd, o.next.Process(ctx, cmd))
}

// named returns sig naming cmd's origin, unless it names one already.
func (o origin) named(cmd *factum.Command, sig factum.Signal) factum.Signal {
	if sig.Origin == "" {
		sig.Origin = cmd.Header[factum.OriginHeader]
	}
	return sig
}

type forgettingOrigin struct {
	origin
	aggregate.Forgetter
}

// runOrigin is origin for an executor that takes runs.
type runOrigin struct {
	origin
	runs command.RunExecutor
}

func (o runOrigin) TakesRuns() bool { return o.runs.TakesRuns() }

// ProcessRun implements command.RunExecutor by the wrapped executor's,
// each signal naming its command's origin.
func (o runOrigin) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	if aggregate.CacheObserverFrom(ctx) == nil && o.keepsAll(cmds) {
		ctx = &aggregate.ObservedContext{Context: ctx, Observer: o.hw}
	}
	o.runs.ProcessRun(ctx, cmds, skip, func(i int, sig factum.Signal) { emit(i, o.named(cmds[i], sig)) })
}

// keepsAll reports whether every command of cmds has the origin-only
// header (see originHeader.keeps).
func (o runOrigin) keepsAll(cmds []*factum.Command) bool {
	for _, c := range cmds {
		if !o.hw.keeps(c.Header) {
			return false
		}
	}
	return true
}

type forgettingRunOrigin struct {
	runOrigin
	aggregate.Forgetter
}
