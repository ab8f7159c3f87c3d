package nats

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
	natsgo "github.com/nats-io/nats.go"
)

// The fleet's aggregate: a counter of the world's context.
type tally struct{ Total int }

type addN struct{ N int }

type added struct{ N int }

// fire is a void command: fire-and-forget.
type fire struct{}

func tallyType(boundedContext string) *aggregate.Definition[tally] {
	return aggregate.New[tally](boundedContext, "tally",
		aggregate.Source(func(s *tally, e added) { s.Total += e.N }),
		aggregate.Handle(func(_ context.Context, _ tally, a addN) ([]any, error) {
			return []any{added(a)}, nil
		}, aggregate.AllowCreate()),
		aggregate.Handle(func(_ context.Context, _ tally, _ fire) ([]any, error) {
			return []any{added{N: 1}}, nil
		}, aggregate.AllowCreate(), aggregate.Void()),
	)
}

// countingStore counts the version conflicts of appends. It passes the
// executor's appends of built streams and of groups on to the store it
// wraps (when that store serves them), so that the executor commits
// runs of one aggregate together, as over the store itself: a wrapper
// hiding them would measure a slower path than the engine takes.
type countingStore struct {
	eventstore.Store
	conflicts atomic.Int64
	commits   atomic.Int64 // appends and group appends tried
	window    appendWindow
}

var _ built.GroupAppender = (*countingStore)(nil)

func (s *countingStore) Append(ctx context.Context, st *factum.EventStream) error {
	start := time.Now()
	return s.count(start, s.Store.Append(ctx, st))
}

// AppendBuilt implements built.Appender by the wrapped store's.
func (s *countingStore) AppendBuilt(ctx context.Context, st built.Stream) error {
	start := time.Now()
	if a := built.Of(s.Store); a != nil {
		return s.count(start, a.AppendBuilt(ctx, st))
	}
	return s.count(start, s.Store.Append(ctx, st.Stream()))
}

// BuiltOwner implements built.Appender: the methods are countingStore's.
func (s *countingStore) BuiltOwner() built.Owner { return built.OwnedBy(s) }

// AppendBuiltGroup implements built.GroupAppender by the wrapped store's.
func (s *countingStore) AppendBuiltGroup(ctx context.Context, ss []built.Stream) error {
	g := built.GroupOf(s.Store)
	if g == nil {
		return factum.Errorf(factum.CodeIllegalState, "counting store: the wrapped store appends no groups: %w", errors.ErrUnsupported)
	}
	start := time.Now()
	return s.count(start, g.AppendBuiltGroup(ctx, ss))
}

// AppendsGroups implements built.GroupAppender: as the wrapped store.
func (s *countingStore) AppendsGroups() bool { return built.GroupOf(s.Store) != nil }

// count counts an append begun at start, and err if it is a version
// conflict, and returns err.
func (s *countingStore) count(start time.Time, err error) error {
	s.window.note(start, time.Now())
	s.commits.Add(1)
	if factum.CodeOf(err) == factum.CodeEventVersionConflict {
		s.conflicts.Add(1)
	}
	return err
}

// probe records which instance processed which request and fails the
// test when one aggregate is processed by two instances at once. The
// commands of one run (a batch the executor processes by ProcessRun) go
// through the middleware concurrently on their instance by design; one
// instance's order is checked by the stored versions and the conflicts. Its hooks run inside the processing, in this order: before,
// block, the delay, the handler, hold.
type probe struct {
	mu     sync.Mutex
	busy   map[string]busyOn         // aggregate ID -> the instance processing it
	by     map[string]map[string]int // request ID -> instance -> times
	errs   []string
	before func(instance string, cmd *factum.Command)
	// block runs with the command's context: a handler that takes its
	// time; an error it returns is the command's outcome, the handler
	// not run.
	block func(ctx context.Context, instance string, cmd *factum.Command) error
	hold  func(instance string, cmd *factum.Command)
	delay time.Duration // widens every window a second writer could use
	// overlaps counts the commands that started while another of their
	// aggregate was under way on their instance: members of a run.
	overlaps int
	started  atomic.Int64
}

func newProbe() *probe {
	return &probe{busy: map[string]busyOn{}, by: map[string]map[string]int{}}
}

func (p *probe) middleware(instance string) aggregate.Middleware {
	return func(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			id, req := cmd.AggregateID.ID, cmd.RequestIDOrID()
			p.mu.Lock()
			if other, ok := p.busy[id]; ok && other.instance != instance {
				p.errs = append(p.errs, fmt.Sprintf("aggregate %s: %s processed on %s while %s processes it", id, req, instance, other.instance))
			}
			on := p.busy[id]
			if on.instance != instance {
				on = busyOn{instance: instance}
			}
			on.commands++
			if on.commands > 1 {
				p.overlaps++
			}
			p.busy[id] = on
			if p.by[req] == nil {
				p.by[req] = map[string]int{}
			}
			p.by[req][instance]++
			before, block, hold, delay := p.before, p.block, p.hold, p.delay
			p.mu.Unlock()
			defer func() {
				p.mu.Lock()
				if on := p.busy[id]; on.instance == instance {
					if on.commands--; on.commands == 0 {
						delete(p.busy, id)
					} else {
						p.busy[id] = on
					}
				}
				p.mu.Unlock()
			}()
			p.started.Add(1)
			if before != nil {
				before(instance, cmd)
			}
			if block != nil {
				if err := block(ctx, instance, cmd); err != nil {
					return factum.Signal{CommandID: cmd.ID, RequestID: req, Stage: factum.StageProcessed, AggregateID: cmd.AggregateID,
						Code: factum.CodeOf(err), Message: err.Error(), SignalTime: time.Now()}
				}
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			s := next(ctx, cmd)
			if hold != nil {
				hold(instance, cmd)
			}
			return s
		}
	}
}

// busyOn is the instance processing an aggregate and how many of its
// commands it is processing.
type busyOn struct {
	instance string
	commands int
}

// times returns how many times the instance processed the request.
func (p *probe) times(req, instance string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.by[req][instance]
}

func (p *probe) check(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.errs {
		t.Error(e)
	}
}

// router stands in for the cross-instance signal sink: it delivers each
// PROCESSED signal to the waiters of the command's origin.
type router struct {
	mu    sync.Mutex
	sinks map[string]command.Sink
}

// signals returns the engine option that registers instance name's local
// sink with r and signals through r.
func (r *router) signals(name string) func(local command.Sink) (command.Sink, error) {
	return func(local command.Sink) (command.Sink, error) {
		r.mu.Lock()
		r.sinks[name] = local
		r.mu.Unlock()
		return routedSink{r: r, local: local}, nil
	}
}

type routedSink struct {
	r     *router
	local command.Sink
}

func (s routedSink) Signal(sig factum.Signal) { s.local.Signal(sig) }

func (s routedSink) SignalOrigin(origin string, sig factum.Signal) {
	s.r.mu.Lock()
	dst := s.r.sinks[origin]
	s.r.mu.Unlock()
	if dst != nil {
		dst.Signal(sig)
	}
}

// fleet is a set of engines on one event store, each with a bus of its
// own, sharing one NATS server.
type fleet struct {
	t       testing.TB
	w       *world
	store   *countingStore
	probe   *probe
	router  *router
	local   LocalMode
	noProbe bool // benchmarks: no probe middleware
	// natsSignals: each instance's signals travel as factum serve's do,
	// through Signals on its own connection, rather than through router.
	natsSignals bool
	mu          sync.Mutex
	engines     map[string]*engine.Engine
	nodes       map[string]*node
	crashed     map[string]bool
	order       []string
}

func newFleet(t testing.TB, w *world, local LocalMode) *fleet {
	return &fleet{t: t, w: w, store: &countingStore{Store: eventstore.NewMemory()}, probe: newProbe(),
		router: &router{sinks: map[string]command.Sink{}}, local: local,
		engines: map[string]*engine.Engine{}, nodes: map[string]*node{}, crashed: map[string]bool{}}
}

// start starts an instance: its partitions, bus and engine.
func (f *fleet) start(name string) *engine.Engine {
	f.t.Helper()
	return f.startOn(name, f.w.url, BusConfig{})
}

// startOn starts an instance connected to url with opts beside the usual
// ones, its bus configured by cfg (the fleet's local mode and 16 lanes
// filled in), its command stream and lease bucket made with cfg.Replicas
// if they do not exist.
func (f *fleet) startOn(name, url string, cfg BusConfig, opts ...natsgo.Option) *engine.Engine {
	t := f.t
	t.Helper()
	cfg.Local, cfg.Lanes = f.local, 16
	n := f.w.nodeAt(t, name, url, max(cfg.Replicas, 1), cfg, opts...)
	var mw []aggregate.Middleware
	if !f.noProbe {
		mw = append(mw, f.probe.middleware(name))
	}
	cfgE := engine.Config{Store: f.store, Bus: n.newBus, CommandMiddleware: mw, Signals: f.router.signals(name)}
	if f.natsSignals {
		s, err := NewSignals(SignalsConfig{Conn: n.nc, Instance: name, Prefix: f.w.prefix + ".signal"})
		if err != nil {
			t.Fatal(err)
		}
		// Closed after the engine's shutdown (cleanups run last first).
		t.Cleanup(func() { _ = s.Close() })
		cfgE.Bus, cfgE.Signals = s.Bus(n.newBus), s.Sink
	}
	e, err := engine.New(cfgE, tallyType(f.w.context))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.stop(name) })
	f.mu.Lock()
	f.engines[name], f.nodes[name] = e, n
	f.order = append(f.order, name)
	f.mu.Unlock()
	return e
}

// stop shuts an instance down in order: its partitions first, given up
// for the others (the commands running end, the queued local ones are
// handed over), then the engine, whose accepted work then settles: an
// engine shut down while it still owned partitions would keep taking the
// other instances' commands from the stream and never be idle under load.
func (f *fleet) stop(name string) {
	f.mu.Lock()
	e, n, crashed := f.engines[name], f.nodes[name], f.crashed[name]
	delete(f.engines, name)
	delete(f.nodes, name)
	f.mu.Unlock()
	if e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if crashed {
		// What is left of a crashed instance: stopped without a word.
		sctx, scancel := context.WithTimeout(ctx, time.Second)
		defer scancel()
		_ = e.Shutdown(sctx)
		_ = n.parts.Close(sctx)
		return
	}
	if err := n.parts.Close(ctx); err != nil {
		f.t.Errorf("close partitions of %s: %v", name, err)
	}
	if err := e.Shutdown(ctx); err != nil && !errors.Is(err, engine.ErrStopped) {
		f.t.Errorf("shutdown %s: %v", name, err)
	}
}

// crash cuts an instance off NATS for good, as if its process died: it
// can neither acknowledge nor renew. Its engine stays for the test to
// release what it holds; cleanup stops it without checks.
func (f *fleet) crash(name string) {
	f.mu.Lock()
	n := f.nodes[name]
	f.crashed[name] = true
	f.mu.Unlock()
	n.nc.Close()
}

func (f *fleet) engine(name string) *engine.Engine {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.engines[name]
}

// pick returns a running instance's engine at random, nil if none runs.
func (f *fleet) pick() *engine.Engine {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, 0, len(f.engines))
	for name := range f.engines {
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil
	}
	return f.engines[names[rand.IntN(len(names))]]
}

// balanced waits until the running instances own fair shares that add up
// to every partition.
func (f *fleet) balanced() {
	f.t.Helper()
	waitFor(f.t, 60*time.Second, "fair shares", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		total := 0
		lo, hi := f.w.partitions, 0
		for _, n := range f.nodes {
			k := len(n.parts.Owned())
			total += k
			lo, hi = min(lo, k), max(hi, k)
		}
		return total == f.w.partitions && hi-lo <= 1
	})
}

// owner returns the instance owning the aggregate's partition.
func (f *fleet) owner(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for name, n := range f.nodes {
		if _, ok := n.parts.OwnsAggregate(id); ok {
			return name
		}
	}
	return ""
}

// send sends addN{1} to the aggregate through the engine and waits for
// PROCESSED, retrying with the same request ID while the outcome is
// retryable or unknown, until it succeeds or d passes.
func send(ctx context.Context, e func() *engine.Engine, id, requestID string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		cmd := factum.NewCommand(factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "shop", Aggregate: "tally"}, ID: id}, addN{N: 1})
		cmd.ID, cmd.RequestID = "", requestID
		eng := e()
		var err error
		if eng == nil {
			err = factum.NewError(factum.CodeTooManyRequests, "no instance")
		} else {
			_, err = eng.Gateway().SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed).Within(5*time.Second))
		}
		if err == nil || !factum.IsRetryable(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// streamsOf returns the aggregate's streams in the fleet's store.
func (f *fleet) streamsOf(t testing.TB, id string) []factum.EventStream {
	t.Helper()
	streams, err := f.store.Load(context.Background(), tallyID(id), 1, eventstore.MaxVersion)
	if err != nil {
		t.Fatal(err)
	}
	return streams
}

// checkStored asserts that every request was appended exactly once, and
// that each aggregate's versions are contiguous with its request count.
func (f *fleet) checkStored(requests map[string][]string) {
	f.t.Helper()
	for id, reqs := range requests {
		streams := f.streamsOf(f.t, id)
		if len(streams) != len(reqs) {
			f.t.Errorf("aggregate %s: %d streams stored, %d requests acknowledged", id, len(streams), len(reqs))
		}
		seen := map[string]int{}
		for i, s := range streams {
			if s.Version != i+1 {
				f.t.Errorf("aggregate %s: version %d at position %d", id, s.Version, i+1)
			}
			seen[s.RequestID]++
		}
		for _, r := range reqs {
			if seen[r] != 1 {
				f.t.Errorf("aggregate %s: request %s stored %d times", id, r, seen[r])
			}
		}
	}
}
