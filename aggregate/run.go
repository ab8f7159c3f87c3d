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
// middleware chain in a goroutine of its own, and emits each command's
// signal as it ends.
//
// Over a store that appends groups (built.GroupAppender), the commands
// form groups: inside its first attempt each command in turn decides on
// the state the commands before it reached, builds its stream on top of
// theirs and passes the turn; a group's streams are then appended as one
// (all or none), and the state is kept as after a run of appends. A
// command's rejection by its handler stands when the group before it is
// committed. A group ends after the last command, after
// eventstore.MaxGroup streams, before a command that
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
