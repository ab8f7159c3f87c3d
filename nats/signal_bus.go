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
// Signal routes it there. A command the gateway sends with a wait carries
// its stage (command.WaitStage of the send's context) in
// factum.OriginWaitHeader, and any other none (the header's value is
// replaced or deleted, never kept), so that only the signals that wait can
// use travel back (see Signal). Use it as engine.Config.Bus.
func (s *Signals) Bus(next engine.NewBus) engine.NewBus {
	if next == nil {
		next = engine.DispatcherBus(command.DispatcherConfig{})
	}
	only := newOriginHeaders(s.cfg.Instance)
	stamped := engine.SendWrapper(next, func(b command.Bus) command.Bus {
		return originBus{next: b, instance: s.cfg.Instance, only: only}
	})
	return func(proc command.Executor, signals command.Sink) (engine.Bus, error) {
		hw := originHeader{only: only[0], origin: s.cfg.Instance}
		return stamped(originExecutorWith(proc, hw, waitHeader{only: only, origin: s.cfg.Instance}), signals)
	}
}

// Stamp sets cmd's origin to instance and deletes any
// factum.OriginWaitHeader, copying the header rather than changing a map
// the caller may share. A wait in the header is the one its origin's send
// stamped, or one inherited with it (a saga's command gets its source
// stream's header): kept, it would keep from instance the signals the wait
// of this send needs. Without one every signal travels (see Signals.Bus,
// which stamps the send's wait).
func Stamp(cmd *factum.Command, instance string) {
	_, waits := cmd.Header[factum.OriginWaitHeader]
	if !waits && cmd.Header[factum.OriginHeader] == instance {
		return
	}
	h := make(map[string]string, len(cmd.Header)+1)
	maps.Copy(h, cmd.Header)
	h[factum.OriginHeader] = instance
	delete(h, factum.OriginWaitHeader)
	cmd.Header = h
}

// originHeaders are the headers of an instance's commands that hold
// nothing but what originBus stamps, by the wait stage they name: index
// 0, none (factum.OriginHeader only), index s, stage s.
type originHeaders [factum.StageSagaHandled + 1]map[string]string

// newOriginHeaders returns the originHeaders of instance.
func newOriginHeaders(instance string) *originHeaders {
	var only originHeaders
	for i := range only {
		only[i] = map[string]string{factum.OriginHeader: instance}
		if i > 0 {
			only[i][factum.OriginWaitHeader] = factum.CommandStage(i).String()
		}
	}
	return &only
}

// originBus stamps every command it sends with its instance and the stage
// of its wait (see Signals.Bus). A command whose header holds nothing
// else gets one of only, maps shared by all such commands: factum never
// writes a header in place, so sharing them is safe and spares the
// allocation per command.
type originBus struct {
	next     command.Bus
	instance string
	only     *originHeaders
}

func (b originBus) Send(ctx context.Context, cmd *factum.Command) error {
	wait, _ := command.WaitStage(ctx, cmd.ID)
	if !wait.Valid() {
		wait = 0
	}
	b.stamp(cmd, wait)
	return b.next.Send(ctx, cmd)
}

// stamp sets cmd's origin to b's instance and its wait to wait (none for
// 0), copying the header rather than changing a map the caller may share.
func (b originBus) stamp(cmd *factum.Command, wait factum.CommandStage) {
	h := cmd.Header
	name := ""
	if wait != 0 {
		name = wait.String()
	}
	v, has := h[factum.OriginWaitHeader]
	if has == (wait != 0) && v == name && h[factum.OriginHeader] == b.instance {
		return // stamped already
	}
	others := len(h)
	if _, ok := h[factum.OriginHeader]; ok {
		others--
	}
	if has {
		others--
	}
	if others == 0 {
		cmd.Header = b.only[wait]
		return
	}
	c := make(map[string]string, others+2)
	maps.Copy(c, h)
	c[factum.OriginHeader] = b.instance
	if wait != 0 {
		c[factum.OriginWaitHeader] = name
	} else {
		delete(c, factum.OriginWaitHeader)
	}
	cmd.Header = c
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
	return originExecutorWith(proc, hw, newWaitHeader(hw))
}

// originExecutorWith is originExecutor with wh for the commands whose
// header names a wait too: a command whose header is one of wh's maps
// with a wait finds wh in its context, in place of no observer or the
// bus's originHeader, so that its stream keeps wh's map of its origin and
// stage (see waitHeader).
func originExecutorWith(proc command.Executor, hw originHeader, wh waitHeader) command.Executor {
	o := origin{proc, hw, wh}
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
	wh   waitHeader
}

func (o origin) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	wait, shared := o.wh.index(cmd.Header)
	if obs := o.observer(ctx, shared, wait != 0); obs != nil {
		ctx = &aggregate.ObservedContext{Context: ctx, Observer: obs}
	}
	return o.named(cmd, o.next.Process(ctx, cmd))
}

// observer returns the header writer that commands need in ctx for their
// streams to keep a shared header map, or nil when ctx has it, or another
// observer, or none would do: shared reports whether every command's
// header is one of the instance's originHeaders, waits whether one of
// them names a wait. Origin-only headers need hw in a context without an
// observer (the bus's originHeader does the same); headers with a wait
// need wh, in place of the bus's originHeader too (see waitHeader).
func (o origin) observer(ctx context.Context, shared, waits bool) aggregate.CacheObserver {
	switch {
	case !shared:
	case !waits:
		if aggregate.CacheObserverFrom(ctx) == nil {
			return o.hw
		}
	case o.wh.takes(ctx):
		return o.wh
	}
	return nil
}

// named returns sig naming cmd's origin and the stage of its wait there,
// unless it names an origin already.
func (o origin) named(cmd *factum.Command, sig factum.Signal) factum.Signal {
	if sig.Origin == "" {
		sig.Origin = cmd.Header[factum.OriginHeader]
		sig.OriginWait = factum.OriginWait(cmd.Header)
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
	shared, waits := o.sharedAll(cmds)
	if obs := o.observer(ctx, shared, waits); obs != nil {
		ctx = &aggregate.ObservedContext{Context: ctx, Observer: obs}
	}
	o.runs.ProcessRun(ctx, cmds, skip, func(i int, sig factum.Signal) { emit(i, o.named(cmds[i], sig)) })
}

// sharedAll reports whether every command of cmds has one of the
// instance's originHeaders, and whether one of them names a wait.
func (o runOrigin) sharedAll(cmds []*factum.Command) (shared, waits bool) {
	for _, c := range cmds {
		wait, ok := o.wh.index(c.Header)
		if !ok {
			return false, false
		}
		waits = waits || wait != 0
	}
	return true, waits
}

type forgettingRunOrigin struct {
	runOrigin
	aggregate.Forgetter
}
