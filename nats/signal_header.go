package nats

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// waitHeader is the aggregate.HeaderWriter Signals.Bus's executor puts in
// the context of a command whose header is one of an instance's
// originHeaders with a wait (its origin and the stage of its wait, and
// nothing else: every command sent through Signals.Bus without a header
// of its own), in place of the bus's originHeader, which keeps only the
// origin-only map: the stream the command appends keeps the shared map of
// its origin and stage, instead of the copy of the command's header the
// executor makes otherwise (see originHeader). It keeps the origin-only
// map too, for a run of commands of both kinds.
type waitHeader struct {
	only   *originHeaders
	origin string
}

var _ aggregate.HeaderWriter = waitHeader{}

// newWaitHeader returns the waitHeader of hw's origin, whose origin-only
// map is hw's.
func newWaitHeader(hw originHeader) waitHeader {
	only := newOriginHeaders(hw.origin)
	if hw.only != nil {
		only[0] = hw.only
	}
	return waitHeader{only: only, origin: hw.origin}
}

// ObserveCache implements aggregate.CacheObserver: it observes nothing.
func (waitHeader) ObserveCache(bool) {}

// StartPhase implements aggregate.PhaseObserver: the phase runs in ctx.
func (waitHeader) StartPhase(ctx context.Context, _ aggregate.Phase) context.Context { return ctx }

// EndPhase implements aggregate.PhaseObserver: it does nothing.
func (waitHeader) EndPhase(context.Context, aggregate.Phase, error) {}

// StreamHeader implements aggregate.HeaderWriter: the shared map equal to
// command, of its wait; nil (the executor copies the command's) for any
// other.
func (h waitHeader) StreamHeader(_ context.Context, command map[string]string) map[string]string {
	if wait, ok := h.index(command); ok {
		return h.only[wait]
	}
	return nil
}

// index returns the wait of command (0 for none) and whether command
// equals h.only's map of it: it holds h's origin, a wait or none, and
// nothing else.
func (h waitHeader) index(command map[string]string) (factum.CommandStage, bool) {
	if n := len(command); n == 0 || n > 2 || h.origin == "" || command[HeaderOrigin] != h.origin {
		return 0, false
	}
	if len(command) == 1 {
		return 0, true
	}
	wait := factum.OriginWait(command)
	return wait, wait != 0
}

// takes reports whether ctx's observer may give way to h for a command
// whose stream keeps one of h's maps: ctx has none, or the bus's
// originHeader, which does nothing but keep the origin-only map.
func (h waitHeader) takes(ctx context.Context) bool {
	switch aggregate.CacheObserverFrom(ctx).(type) {
	case nil, originHeader:
		return true
	}
	return false
}
