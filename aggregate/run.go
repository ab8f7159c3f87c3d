package aggregate

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
)

// ProcessRun implements command.RunExecutor: it processes cmds, commands
// of one aggregate in their arrival order, each through the whole
// middleware chain in a goroutine of its own, and emits the commands'
// signals in their order, one at a time. A command skip reports skipped
// (checked just before its chain starts) is not processed: its signal is
// skip's.
//
// Over a store that appends groups (built.GroupAppender), the commands
// form groups: inside its first attempt each command in turn decides on
// the state the commands before it reached, builds its stream on top of
// theirs and passes the turn; a group's streams are then appended as one
// (all or none), and the state is kept as after a run of appends. A
// command's rejection by its handler stands when the group before it is
// committed. A group ends after the last command, after
// eventstore.MaxGroup streams, before a command that does not fit it,
// and when the next command does not reach its attempt within
// arrivalGrace (its middleware may be waiting for the commands before it
// to end). A command does not fit when its context has ended, when it
// repeats an earlier command's request ID, or when it expects a version
// the state has not reached: it takes the ordinary path. Nor does one
// that binds effects or whose stream cannot be built: it goes on from its
// decision alone, on the state the committed group leaves (so that its
// one attempt looks the state up and decides once). A command after an
// ended group waits until the chains of those before it returned, then
// starts a group of its own. When a group's append fails in any way, its
// state is dropped and each of its commands takes the ordinary path in
// turn, which answers as processing them one at a time does (a duplicate
// as a duplicate, an unknown outcome settled by a lookup). Every command
// so gets the outcome Process would give it were cmds processed one at a
// time.
//
// A command's answer waits for its group's commit, and so for the
// decisions of the commands joining the group after it (up to
// eventstore.MaxGroup streams). An attempt its middleware abandons (a
// timeout answering while the attempt runs on) keeps the turn it took
// until it passes it; one that comes after its chain returned takes the
// ordinary path. An attempt finds its place in the run by its context's
// values or, when a middleware called the rest of the chain with a
// context without them (context.Background()), by its command: a
// middleware passing a copy of the command in such a context takes it out
// of the run's order, to the ordinary path at once.
//
// Over any other store, or for commands of more than one aggregate,
// ProcessRun processes cmds one at a time.
func (p *processor[S]) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(i int, sig factum.Signal)) {
	if p.group == nil || len(cmds) < 2 || !oneAggregate(cmds) {
		processEach(ctx, p, cmds, skip, emit)
		return
	}
	r := newRun(p, cmds)
	if p.runs.add(r) {
		defer p.runs.remove(r)
	}
	var wg sync.WaitGroup
	last := len(r.members) - 1
	for i := range r.members[:last] {
		m := &r.members[i]
		// A goroutine of its own, kept by the executor with its grown
		// stack (see workerPool).
		p.workers.Go(&wg, func() { m.process(ctx, skip, emit) })
	}
	r.members[last].process(ctx, skip, emit)
	wg.Wait()
}

// processEach processes cmds one at a time, in order, skipping those skip
// reports.
func processEach(ctx context.Context, e Executor, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(i int, sig factum.Signal)) {
	for i, c := range cmds {
		if skip != nil {
			if sig, ok := skip(c); ok {
				emit(i, sig)
				continue
			}
		}
		emit(i, e.Process(ctx, c))
	}
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
func (r router) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(i int, sig factum.Signal)) {
	if len(cmds) == 0 {
		return
	}
	if p, ok := r[cmds[0].AggregateID.NamedAggregate].(runExecutor); ok {
		p.ProcessRun(ctx, cmds, skip, emit)
		return
	}
	processEach(ctx, r, cmds, skip, emit)
}

// runExecutor is an executor processing runs (command.RunExecutor, which
// this package cannot name).
type runExecutor interface {
	TakesRuns() bool
	ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(i int, sig factum.Signal))
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
var arrivalGrace = time.Millisecond // a variable for the tests' hook only (export_test.go)

// run is one run of commands: they take turns, in their order, at
// deciding on the aggregate's state and joining the open group.
type run[S any] struct {
	p       *processor[S]
	members []runMember[S]
	// cur is the open group, or nil; the member holding the turn owns it.
	cur *group[S]

	// emitMu is held by the member emitting signals; next, which it
	// guards, is the first member whose signal was not emitted.
	emitMu sync.Mutex
	next   int
}

// emitInOrder keeps the member's signal and emits, one at a time and in
// the members' order, every signal whose predecessors' were emitted. The
// member completing the prefix emits for the members waiting behind it;
// a member finding another emitting leaves its signal to it and returns.
func (r *run[S]) emitInOrder(m *runMember[S], sig factum.Signal, emit func(int, factum.Signal)) {
	m.sig = sig
	m.signalled.Store(true)
	for r.emitMu.TryLock() {
		for r.next < len(r.members) && r.members[r.next].signalled.Load() {
			n := &r.members[r.next]
			emit(r.next, n.sig)
			n.sig = factum.Signal{}
			r.next++
		}
		next := r.next
		r.emitMu.Unlock()
		// A signal left while the lock was held, whose member found it
		// held, is emitted by the holder: it looks again once unlocked.
		if next == len(r.members) || !r.members[next].signalled.Load() {
			return
		}
	}
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
	// done is closed once the member's chain returned, its turn was
	// passed and the members before it are done.
	done chan struct{}
	// passed is closed once the member's turn was passed on (pass).
	passed   chan struct{}
	passOnce sync.Once
	calls    atomic.Int32
	// sig is the member's signal, signalled once it is known; kept until
	// the signals before it were emitted (emitInOrder).
	sig       factum.Signal
	signalled atomic.Bool
	// state tells whether the member's first attempt took its turn
	// (memberEntered) or its chain returned first (memberGone): the one
	// that comes second leaves the turn to the other.
	state atomic.Int32
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

	// Set when the member does not fit its group (join), read by the rest
	// of its attempt.
	failure error       // its load failed
	alone   decision[S] // it decided on the group's state, to be appended alone
}

// The states of a run member (runMember.state).
const (
	memberIdle    int32 = iota // neither its attempt nor its chain's end came
	memberEntered              // its first attempt took the turn
	memberGone                 // its chain returned before any attempt came
)

// decision is what a member that does not fit its group decided on the
// group's running state: the group ends without it and, once committed,
// leaves the state to the member, which applies its effects and appends
// its stream alone, as its ordinary path would.
type decision[S any] struct {
	g      *group[S]
	events []any
	effs   []Effect
}

func newRun[S any](p *processor[S], cmds []*factum.Command) *run[S] {
	r := &run[S]{p: p, members: make([]runMember[S], len(cmds))}
	for i, c := range cmds {
		m := &r.members[i]
		m.r, m.i, m.cmd = r, i, c
		m.arrived, m.turn, m.done, m.passed = make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
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

// process runs the member's command through the chain and emits its
// signal, unless skip reports the command skipped: then its signal is
// skip's. A chain that returned without an attempt taking the turn (a
// middleware answered the command itself, or left its attempt running)
// passes it on here.
//
// The chain starts once the member before it arrived at its attempt: a
// middleware holding a command until others end (a bound on concurrent
// commands, a lock) then holds only commands after those that passed it,
// which never wait for it (see arrivalGrace), as one command at a time
// never waits for a later one.
//
// The signal is emitted once those of the members before it were (see
// emitInOrder), so that an aggregate's signals leave in the commands'
// order, as one at a time.
func (m *runMember[S]) process(ctx context.Context, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	if m.i > 0 {
		<-m.r.members[m.i-1].arrived
	}
	var sig factum.Signal
	skipped := false
	if skip != nil {
		sig, skipped = skip(m.cmd)
	}
	if !skipped {
		sig = m.r.p.run(&runContext[S]{Context: ctx, m: m}, m.cmd)
	}
	m.arrive.Do(func() { close(m.arrived) })
	if m.state.CompareAndSwap(memberIdle, memberGone) {
		// No attempt took the turn, and none that comes after takes it
		// (see attempt): it is passed here.
		<-m.turn
		m.pass()
	} else {
		// An attempt holds the turn, though its chain may have left it
		// running: the attempt passes it.
		<-m.passed
	}
	m.r.emitInOrder(m, sig, emit)
	m.afterPredecessors()
	close(m.done)
}

// pass passes the member's turn on, once. From the last member it ends
// the open group; to a next member that does not arrive within
// arrivalGrace too.
func (m *runMember[S]) pass() {
	m.passOnce.Do(func() {
		defer close(m.passed)
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
// group when it can, any other takes the ordinary path in order. So does
// a first attempt that comes after the member's chain returned (its
// middleware left it running): the turn was passed without it.
func (m *runMember[S]) attempt(ctx context.Context, cmd *factum.Command) outcome {
	r := m.r
	p := r.p
	if m.calls.Add(1) > 1 || !m.state.CompareAndSwap(memberIdle, memberEntered) {
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
	switch m.join(ctx, cmd) {
	case joinOrdinary:
		m.pass()
		m.afterPredecessors()
		return p.attempt(ctx, cmd)
	case joinLoadFailed:
		m.pass()
		m.afterPredecessors()
		return outcome{err: m.failure, retrySafe: true}
	case joinDecidedAlone:
		m.pass()
		m.afterPredecessors()
		return m.appendAlone(ctx, cmd)
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

// appendAlone ends the attempt of a member that decided on its group's
// state but does not fit the group (see decision): on the state the
// committed group leaves, it applies the effects and appends the stream
// alone. After a group that failed, the state decided on is not the
// store's: the command is decided again, as a retry would.
func (m *runMember[S]) appendAlone(ctx context.Context, cmd *factum.Command) outcome {
	d := m.alone
	m.alone = decision[S]{}
	if d.g.err != nil {
		return m.r.p.attempt(ctx, cmd)
	}
	po, _ := CacheObserverFrom(ctx).(PhaseObserver)
	return m.r.p.decided(ctx, po, cmd, d.g.e, d.events, d.effs)
}
