package aggregate

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
)

// ProcessRun implements command.RunExecutor: it processes cmds, commands
// of one aggregate in their arrival order, each through the whole
// middleware chain in a goroutine of its own, and emits each command's
// signal as it ends.
//
// Over a store that appends groups (built.GroupAppender), the commands
// form groups: inside its first attempt each command in turn decides on
// the state the commands before it reached, builds its stream on top of
// theirs and passes the turn; a group's streams are then appended as one
// (all or none), and the state is kept as after a run of appends. A
// command's rejection by its handler stands when the group before it is
// committed. A group ends after the last command, before a command that
// does not fit it (one binding effects, one repeating an earlier
// command's request ID, one expecting a version the state has not
// reached, one whose stream cannot be built), which takes the ordinary
// path, and when the next command does not reach its attempt within
// arrivalGrace (its middleware may be waiting for the commands before it
// to end). A command after an ended group waits until the chains of those
// before it returned, then starts a group of its own. When a group's
// append fails in any way, its state is dropped and each of its commands
// takes the ordinary path in turn, which answers as processing them one
// at a time does (a duplicate as a duplicate, an unknown outcome settled
// by a lookup). Every command so gets the outcome Process would give it
// were cmds processed one at a time.
//
// Over any other store, or for commands of more than one aggregate,
// ProcessRun processes cmds one at a time.
func (p *processor[S]) ProcessRun(ctx context.Context, cmds []*factum.Command, emit func(i int, sig factum.Signal)) {
	if p.group == nil || len(cmds) < 2 || !oneAggregate(cmds) {
		for i, c := range cmds {
			emit(i, p.run(ctx, c))
		}
		return
	}
	r := newRun(p, cmds)
	var wg sync.WaitGroup
	last := len(r.members) - 1
	for i := range r.members[:last] {
		m := &r.members[i]
		wg.Go(func() { m.process(ctx, emit) })
	}
	r.members[last].process(ctx, emit)
	wg.Wait()
}

// TakesRuns implements command.RunExecutor: the executor takes runs when
// its store appends groups.
func (p *processor[S]) TakesRuns() bool { return p.group != nil }

// TakesRuns implements command.RunExecutor: the executor takes runs when
// one of its types' executors does.
func (r router) TakesRuns() bool {
	for _, p := range r {
		if t, ok := p.(runExecutor); ok && t.TakesRuns() {
			return true
		}
	}
	return false
}

// ProcessRun implements command.RunExecutor by routing the run to its
// aggregate type's executor.
func (r router) ProcessRun(ctx context.Context, cmds []*factum.Command, emit func(i int, sig factum.Signal)) {
	if len(cmds) == 0 {
		return
	}
	if p, ok := r[cmds[0].AggregateID.NamedAggregate].(runExecutor); ok {
		p.ProcessRun(ctx, cmds, emit)
		return
	}
	for i, c := range cmds {
		emit(i, r.Process(ctx, c))
	}
}

// runExecutor is an executor processing runs (command.RunExecutor, which
// this package cannot name).
type runExecutor interface {
	TakesRuns() bool
	ProcessRun(ctx context.Context, cmds []*factum.Command, emit func(i int, sig factum.Signal))
}

// oneAggregate reports whether cmds are all of one aggregate, as the
// state cache keys them.
func oneAggregate(cmds []*factum.Command) bool {
	for _, c := range cmds[1:] {
		if c.AggregateID.ID != cmds[0].AggregateID.ID || c.AggregateID.NamedAggregate != cmds[0].AggregateID.NamedAggregate {
			return false
		}
	}
	return true
}

// arrivalGrace is how long a group waits for the next command of its run
// to reach its attempt before it ends without it. The next command's
// goroutine is normally on its way, microseconds behind; a middleware
// holding it until the commands before it end (a bound on concurrent
// commands, a lock) would otherwise wait for a group that waits for it.
const arrivalGrace = time.Millisecond

// run is one run of commands: they take turns, in their order, at
// deciding on the aggregate's state and joining the open group.
type run[S any] struct {
	p       *processor[S]
	members []runMember[S]
	// cur is the open group, or nil; the member holding the turn owns it.
	cur *group[S]
}

// group is the streams some consecutive members of a run built one on
// top of another, appended as one.
type group[S any] struct {
	r       *run[S]
	e       *entry[S] // the running state, checked out for the group
	broken  bool      // the running state cannot be kept
	streams []built.Stream
	joined  []*runMember[S] // the members waiting for its outcome, in order

	// result is closed when the group's outcome, err, is known.
	result chan struct{}
	err    error
}

// runMember is one command of a run: its place in the turns and what it
// brought to its group.
type runMember[S any] struct {
	r   *run[S]
	i   int
	cmd *factum.Command
	// arrived is closed when the member reached its attempt, or its chain
	// returned without one; turn when the member before it passed its
	// turn.
	arrived, turn chan struct{}
	arrive        sync.Once
	// done is closed once the member's chain returned and so did those of
	// the members before it.
	done   chan struct{}
	passed sync.Once
	calls  atomic.Int32
	// repeat: an earlier command of the run has the member's request ID.
	repeat bool

	// Set while the member holds the turn, read after its group's result.
	g         *group[S]       // the group it joined
	ctx       context.Context // its attempt's context, which keeps the append alive
	stream    *factum.EventStream
	names     []string
	rejection error // the handler's rejection on the running state
	atZero    bool  // the rejection was of an aggregate that does not exist
	stored    StoredState
	observe   bool // stored is the state it reached
	actx      context.Context
}

func newRun[S any](p *processor[S], cmds []*factum.Command) *run[S] {
	r := &run[S]{p: p, members: make([]runMember[S], len(cmds))}
	for i, c := range cmds {
		m := &r.members[i]
		m.r, m.i, m.cmd = r, i, c
		m.arrived, m.turn, m.done = make(chan struct{}), make(chan struct{}), make(chan struct{})
		rid := c.RequestIDOrID()
		for _, b := range cmds[:i] {
			if b.RequestIDOrID() == rid {
				m.repeat = true
				break
			}
		}
	}
	close(r.members[0].turn)
	return r
}

type runKey struct{}

// errGroupUnknown is a group's outcome while its append is under way.
var errGroupUnknown = errors.New("aggregate: the group's append did not return")

// runContext is the context a member's chain runs in: its parent's, and
// the member for the innermost attempt to find.
type runContext[S any] struct {
	context.Context
	m *runMember[S]
}

// Value returns the member for runKey, and the parent's values for every
// other key.
func (c *runContext[S]) Value(key any) any {
	if key == (runKey{}) {
		return c.m
	}
	return c.Context.Value(key)
}

// memberOf returns the run member cmd is, from the context of its
// attempt, or nil outside a run of this executor's.
func (p *processor[S]) memberOf(ctx context.Context, cmd *factum.Command) *runMember[S] {
	m, _ := ctx.Value(runKey{}).(*runMember[S])
	if m == nil || m.r.p != p || m.cmd.ID != cmd.ID || m.cmd.AggregateID.ID != cmd.AggregateID.ID {
		return nil
	}
	return m
}

// process runs the member's command through the chain and emits its
// signal. A chain that returned without the attempt taking the turn
// (a middleware answered the command itself) passes it on here.
//
// The chain starts once the member before it arrived at its attempt: a
// middleware holding a command until others end (a bound on concurrent
// commands, a lock) then holds only commands after those that passed it,
// which never wait for it (see arrivalGrace), as one command at a time
// never waits for a later one.
func (m *runMember[S]) process(ctx context.Context, emit func(int, factum.Signal)) {
	if m.i > 0 {
		<-m.r.members[m.i-1].arrived
	}
	sig := m.r.p.run(&runContext[S]{Context: ctx, m: m}, m.cmd)
	emit(m.i, sig)
	m.arrive.Do(func() { close(m.arrived) })
	<-m.turn
	m.pass()
	m.afterPredecessors()
	close(m.done)
}

// pass passes the member's turn on, once. From the last member it ends
// the open group; to a next member that does not arrive within
// arrivalGrace too.
func (m *runMember[S]) pass() {
	m.passed.Do(func() {
		r := m.r
		if m.i+1 == len(r.members) {
			r.end()
			return
		}
		next := &r.members[m.i+1]
		if r.cur != nil && !next.arrivedWithin(arrivalGrace) {
			g := r.cur
			r.cur = nil
			close(next.turn)
			g.commit()
			return
		}
		close(next.turn)
	})
}

// arrivedWithin reports whether the member reaches its attempt (or the
// end of its chain) within d.
func (m *runMember[S]) arrivedWithin(d time.Duration) bool {
	select {
	case <-m.arrived:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-m.arrived:
		return true
	case <-t.C:
		return false
	}
}

// end ends the open group, if any, and commits it. The member holding
// the turn calls it.
func (r *run[S]) end() {
	if g := r.cur; g != nil {
		r.cur = nil
		g.commit()
	}
}

// afterPredecessors waits until the chains of the members before m have
// returned: the ordinary path of m, or a group it starts, begins then, as
// it would one command at a time.
func (m *runMember[S]) afterPredecessors() {
	if m.i > 0 {
		<-m.r.members[m.i-1].done
	}
}

// attempt is an attempt of the member's command: the first one joins a
// group when it can, any other takes the ordinary path in order.
func (m *runMember[S]) attempt(ctx context.Context, cmd *factum.Command) outcome {
	r := m.r
	p := r.p
	if m.calls.Add(1) > 1 {
		m.afterPredecessors()
		return p.attempt(ctx, cmd)
	}
	m.arrive.Do(func() { close(m.arrived) })
	<-m.turn
	if r.cur == nil {
		// The group before ended: this one starts on the state the
		// commands before it leave.
		m.afterPredecessors()
		r.cur = &group[S]{r: r, result: make(chan struct{})}
	}
	if !m.join(ctx, cmd) {
		m.pass()
		m.afterPredecessors()
		return p.attempt(ctx, cmd)
	}
	g := m.g
	<-g.result
	if m.stream != nil {
		po, _ := CacheObserverFrom(ctx).(PhaseObserver)
		endPhase(m.actx, po, PhaseAppend, g.err)
	}
	if g.err != nil {
		// Whatever became of the group, the ordinary path answers as one
		// command at a time would.
		m.afterPredecessors()
		return p.attempt(ctx, cmd)
	}
	if m.rejection != nil {
		if !m.atZero {
			// As rejected: a retried request's first attempt may have
			// changed the state; the store knows.
			if o, dup := p.duplicate(ctx, cmd); dup {
				return o
			}
		}
		return outcome{err: m.rejection}
	}
	return outcome{version: m.stream.Version, names: m.names, at: m.stream.CreateTime}
}

// join adds the member's command to the open group, holding the turn,
// and passes the turn on. It reports false when the command does not fit
// the group: the group is then ended and committed without it, and the
// turn is the caller's to pass.
func (m *runMember[S]) join(ctx context.Context, cmd *factum.Command) bool {
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
	o := CacheObserverFrom(ctx)
	po, _ := o.(PhaseObserver)
	fits := !m.repeat && (g.e == nil || cmd.ExpectedVersion <= g.e.st.Version)
	if fits && g.e == nil {
		e, err := p.checkout(ctx, cmd, o, po)
		if err == nil {
			g.e = e
		}
		// A failed load is the ordinary path's to answer.
		fits = err == nil
	} else if fits && o != nil {
		o.ObserveCache(true)
	}
	var events []any
	var effs []Effect
	var err error
	if fits {
		dctx := startPhase(ctx, po, PhaseDecide)
		events, effs, err = p.def.decide(dctx, &g.e.st, cmd)
		endPhase(dctx, po, PhaseDecide, err)
		if err != nil {
			// Provisional: it stands if the group before it is committed.
			m.rejection, m.atZero = err, g.e.st.Version == 0
			m.g, m.ctx = g, ctx
			g.joined = append(g.joined, m)
			holding = false
			m.pass()
			return true
		}
		// Effects are bound to one command's append; the ordinary path
		// binds them.
		fits = len(effs) == 0
	}
	var stream *factum.EventStream
	var names []string
	if fits {
		hw, _ := po.(HeaderWriter)
		stream, names, err = p.build(ctx, hw, cmd, &g.e.st, events)
		fits = err == nil
	}
	if !fits {
		holding = false
		r.end()
		return false
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
		return true
	}
	if p.states != nil {
		if st, err := p.def.ToStored(g.e.st); err == nil {
			m.stored, m.observe = st, true
		}
	}
	holding = false
	m.pass()
	return true
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
	// outcome: unknown, which their ordinary path settles.
	g.err = errGroupUnknown
	defer close(g.result)
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
	if e := g.e; e != nil && !g.broken && e.st.Version > 0 {
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
