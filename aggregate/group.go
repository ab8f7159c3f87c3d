package aggregate

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
)

// group is the streams some consecutive members of a run built one on
// top of another, appended as one.
type group[S any] struct {
	r       *run[S]
	e       *entry[S] // the running state, checked out for the group
	broken  bool      // the running state cannot be kept
	streams []built.Stream
	joined  []*runMember[S] // the members waiting for its outcome, in order
	// handed: the running state is left to the member that ended the
	// group by not fitting it (see decision), not put back in the cache.
	handed bool

	// result is closed when the group's outcome, err, is known.
	result chan struct{}
	err    error
}

// joinResult is what became of a member's joining its group.
type joinResult int

const (
	// joined: the member's stream, or its rejection, is in the group.
	joined joinResult = iota
	// joinOrdinary: the member does not fit, known before its state was
	// looked up; the ordinary path looks it up and decides.
	joinOrdinary
	// joinLoadFailed: the state could not be loaded (runMember.failure).
	joinLoadFailed
	// joinDecidedAlone: the member decided on the group's state, but its
	// stream goes alone (runMember.alone).
	joinDecidedAlone
)

// join adds the member's command to the open group, holding the turn,
// and passes the turn on. When the command does not fit the group, the
// group is ended and committed without it, and the turn is the caller's
// to pass. Whether it fits is known before the state is looked up, or
// once it is decided: either way the attempt looks the state up and
// decides once, as one command at a time does.
func (m *runMember[S]) join(ctx context.Context, cmd *factum.Command) joinResult {
	r := m.r
	p := r.p
	g := r.cur
	holding := true
	defer func() {
		if !holding {
			return
		}
		// A panic (under Recover) in user code run while holding the turn
		// (a load's sourcing function, an event's encoder): the group ends
		// with what it holds, as the appends before it would have been
		// made, and the state it leaves is not kept.
		rec := recover()
		g.broken = true
		r.cur = nil
		m.pass()
		g.commit()
		if rec != nil {
			panic(rec)
		}
	}()
	// A command whose context ended is not appended (the store refuses
	// it), nor one repeating a request of the run (its outcome is the
	// earlier command's); one expecting a version ahead of the state has
	// seen another writer's append.
	if ctx.Err() != nil || m.repeat || (g.e != nil && cmd.ExpectedVersion > g.e.st.Version) {
		holding = false
		r.end()
		return joinOrdinary
	}
	o := CacheObserverFrom(ctx)
	po, _ := o.(PhaseObserver)
	if g.e == nil {
		e, err := p.checkout(ctx, cmd, o, po)
		if err != nil {
			m.failure = err
			holding = false
			r.end()
			return joinLoadFailed
		}
		g.e = e
	} else if o != nil {
		o.ObserveCache(true)
	}
	dctx := startPhase(ctx, po, PhaseDecide)
	events, effs, err := p.def.decide(dctx, &g.e.st, cmd)
	endPhase(dctx, po, PhaseDecide, err)
	if err != nil {
		// Provisional: it stands if the group before it is committed.
		m.rejection, m.atZero = err, g.e.st.Version == 0
		m.g, m.ctx = g, ctx
		g.joined = append(g.joined, m)
		holding = false
		m.pass()
		return joined
	}
	// Effects are bound to one command's append, and a stream that cannot
	// be built fails alone: the member goes on from its decision alone.
	fits := len(effs) == 0
	var stream *factum.EventStream
	var names []string
	if fits {
		hw, _ := po.(HeaderWriter)
		stream, names, err = p.build(ctx, hw, cmd, &g.e.st, events)
		fits = err == nil
	}
	if !fits {
		m.alone = decision[S]{g: g, events: events, effs: effs}
		g.handed = true
		holding = false
		r.end()
		return joinDecidedAlone
	}
	m.stream, m.names, m.g, m.ctx = stream, names, g, ctx
	g.joined = append(g.joined, m)
	g.streams = append(g.streams, built.Mark(stream))
	// The phase spans the wait for the group's commit.
	m.actx = startPhase(ctx, po, PhaseAppend)
	followed, panicked := m.follow(events)
	if !followed {
		// As after an append whose state cannot follow: the group ends
		// with this stream, and the state is not kept.
		g.broken = true
		holding = false
		r.cur = nil
		m.pass()
		g.commit()
		if panicked != nil && g.err == nil {
			// Appended, then the sourcing function panicked, as one
			// command at a time it would. (Not appended: the ordinary
			// path appends and panics.)
			panic(panicked)
		}
		return joined
	}
	if p.states != nil {
		if st, err := p.def.ToStored(g.e.st); err == nil {
			m.stored, m.observe = st, true
		}
	}
	holding = false
	if len(g.streams) == eventstore.MaxGroup {
		// As many as a store takes at once: the next command starts a
		// group of its own.
		r.cur = nil
		m.pass()
		g.commit()
		return joined
	}
	m.pass()
	return joined
}

// follow applies the member's stream to the running state, reporting
// false when the state cannot follow, and the panic of a sourcing
// function, which the caller raises again once it knows whether the
// stream was appended.
func (m *runMember[S]) follow(events []any) (ok bool, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			ok, panicked = false, r
		}
	}()
	return m.r.p.follow(m.g.e, m.stream, m.names, events), nil
}

// commit appends the ended group's streams as one, under a context that
// ends only when every member waiting for it has gone, and on success
// tells the state observer of the states reached, in order, and puts the
// running state back in the cache. On failure the state is dropped.
func (g *group[S]) commit() {
	p := g.r.p
	// Should the store or the observer panic, the members still learn an
	// outcome: unknown, which their ordinary path settles, under the
	// chain's Recover as one command at a time is. The panic stops here:
	// the commit may run outside every chain (on the goroutine of a
	// member a middleware answered), where nothing would recover it.
	g.err = errGroupUnknown
	defer func() {
		if rec := recover(); rec != nil {
			g.err = fmt.Errorf("%w: the store or a state observer panicked: %v", errGroupUnknown, rec)
		}
		close(g.result)
	}()
	var err error
	if len(g.streams) > 0 {
		ctx, release := g.writeContext()
		err = p.group.AppendBuiltGroup(ctx, g.streams)
		release()
	}
	if err != nil && !g.settle(err) {
		g.err = err
		return
	}
	if p.states != nil {
		for _, m := range g.joined {
			if m.observe {
				p.states.ObserveState(m.stored)
			}
		}
	}
	if e := g.e; e != nil && !g.broken && !g.handed && e.st.Version > 0 {
		// (An aggregate that does not exist is not cached: it would
		// hide one created elsewhere.)
		p.cache.put(e)
	}
	g.err = nil
}

// settle reports whether the group whose append failed with err was
// appended after all: an outcome the store did not know, which the group's
// first request settles, as the group is stored whole or not at all. The
// provisional rejections of the group stand only if it was: their
// ordinary path would decide on the state after the whole group.
func (g *group[S]) settle(err error) bool {
	if errors.Is(err, factum.ErrEventVersionConflict) || errors.Is(err, factum.ErrDuplicateRequestID) ||
		errors.Is(err, factum.ErrDuplicateAggregateID) || errors.Is(err, factum.ErrTenantMismatch) {
		return false // a refusal: nothing was appended
	}
	first := g.streams[0].Stream()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(g.base()), undoTimeout)
	defer cancel()
	s, lerr := g.r.p.store.Lookup(ctx, first.AggregateID, first.RequestID)
	return lerr == nil && s.CommandID == first.CommandID && s.Version == first.Version
}

// writeContext returns the context the group is appended under: the first
// joined member's values, cancelled only once every joined member's
// context has ended, so that one caller's end cannot fail the others. The
// caller calls release when the append returned.
func (g *group[S]) writeContext() (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(g.base()))
	var left atomic.Int32
	left.Store(int32(len(g.joined)))
	stops := make([]func() bool, 0, len(g.joined))
	for _, m := range g.joined {
		stops = append(stops, context.AfterFunc(m.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		}))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// base returns the context of the group's first joined member, whose
// values (the tenant, a trace) the group's store calls carry.
func (g *group[S]) base() context.Context {
	if len(g.joined) > 0 {
		return g.joined[0].ctx
	}
	return context.Background()
}
