package nats

import (
	"context"

	"github.com/factum-go/factum/aggregate"
)

// originHeader is the aggregate.HeaderWriter every command the bus runs
// finds in its context (and every command Signals.Bus's executor runs in
// a context without an observer). A command whose header holds this
// instance's origin and nothing else (every command sent here without a
// header of its own) appends a stream whose header is the bus's
// origin-only map itself, instead of the copy of the command's header the
// executor makes otherwise: the copy keeps a sender's map the sender's to
// change, and the origin-only map is the bus's, shared and never written,
// so a stream can keep it (stored streams never change). Any other header
// is copied as before (StreamHeader returns nil). A command middleware
// that sets an observer of its own (a tracer) replaces this one for the
// commands it wraps; the executor then copies the header as without one.
type originHeader struct {
	only   map[string]string
	origin string // only's HeaderOrigin
}

var _ aggregate.HeaderWriter = originHeader{}

// ObserveCache implements aggregate.CacheObserver: it observes nothing.
func (originHeader) ObserveCache(bool) {}

// StartPhase implements aggregate.PhaseObserver: the phase runs in ctx.
func (originHeader) StartPhase(ctx context.Context, _ aggregate.Phase) context.Context { return ctx }

// EndPhase implements aggregate.PhaseObserver: it does nothing.
func (originHeader) EndPhase(context.Context, aggregate.Phase, error) {}

// StreamHeader implements aggregate.HeaderWriter: the origin-only map
// for a command header equal to it; nil (the executor copies the
// command's) for any other.
func (h originHeader) StreamHeader(_ context.Context, command map[string]string) map[string]string {
	if h.keeps(command) {
		return h.only
	}
	return nil
}

// keeps reports whether a command of header command appends a stream
// whose header is h.only: command holds this instance's origin and
// nothing else.
func (h originHeader) keeps(command map[string]string) bool {
	if len(command) != 1 {
		return false
	}
	o, ok := command[HeaderOrigin]
	return ok && o == h.origin
}
