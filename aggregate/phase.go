package aggregate

import "context"

// Phase is one step of an attempt at a command, as a PhaseObserver sees
// it.
type Phase uint8

// The phases of an attempt, in their order. A cache hit skips PhaseLoad;
// a command without effects skips PhaseEffects.
const (
	// PhaseLoad rebuilds the aggregate's state from its snapshot and the
	// streams after it (a cache miss).
	PhaseLoad Phase = iota + 1
	// PhaseDecide runs the command's handler against the state.
	PhaseDecide
	// PhaseEffects binds the effects the handler returned.
	PhaseEffects
	// PhaseAppend appends the stream to the event store.
	PhaseAppend
)

// String returns the phase's name: load, decide, effects or append.
func (p Phase) String() string {
	switch p {
	case PhaseLoad:
		return "load"
	case PhaseDecide:
		return "decide"
	case PhaseEffects:
		return "effects"
	case PhaseAppend:
		return "append"
	}
	return "unknown"
}

// PhaseObserver is a CacheObserver that also learns of each phase of each
// attempt: an executor finding the CacheObserver in a command's context
// (WithCacheObserver) to be a PhaseObserver calls StartPhase as a phase
// begins and runs the phase in the context it returns, then calls
// EndPhase with that context and the phase's error. A tracer opens a
// child span there, or marks the phase's end with an event. Both are
// called on the processing goroutine, so they must not block. Without an
// observer, or with one that is no PhaseObserver, the executor does
// nothing more.
type PhaseObserver interface {
	CacheObserver
	StartPhase(ctx context.Context, p Phase) context.Context
	EndPhase(ctx context.Context, p Phase, err error)
}

// startPhase returns the context phase p runs in: o's when o is set.
func startPhase(ctx context.Context, o PhaseObserver, p Phase) context.Context {
	if o == nil {
		return ctx
	}
	return o.StartPhase(ctx, p)
}

// endPhase tells o, when set, that phase p ended with err.
func endPhase(ctx context.Context, o PhaseObserver, p Phase, err error) {
	if o != nil {
		o.EndPhase(ctx, p, err)
	}
}

// HeaderWriter is a PhaseObserver that also writes into the header of
// each stream the executor builds, such as a tracer putting the trace
// context the stream's event functions continue from. The executor finding
// its PhaseObserver to be a HeaderWriter calls StreamHeader, on the
// processing goroutine, with the attempt's context and the command's
// header (read-only), for the stream's header: a map holding the
// command's entries and what the writer adds, which the stream keeps and
// nobody writes afterwards (a new map, or one the writer shares between
// streams and never changes), or nil when it has nothing to give (the
// executor then copies the command's, as without a writer). Writing
// into the stream's own header, rather than into a copy of the command's
// that the stream would copy again, saves a map per command.
type HeaderWriter interface {
	PhaseObserver
	StreamHeader(ctx context.Context, command map[string]string) map[string]string
}
