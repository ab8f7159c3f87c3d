package compensation_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/snapshot"
)

// The application under test: orders, and a projection of their
// quantities whose failures can be injected.

type Order struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type PlaceOrder struct {
	SKU string
	Qty int
}

type OrderPlaced struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

var orders = aggregate.New[Order]("shop", "order",
	aggregate.Source(func(o *Order, e OrderPlaced) { o.SKU, o.Qty = e.SKU, e.Qty }),
	aggregate.Handle(func(_ context.Context, _ Order, c PlaceOrder) ([]any, error) {
		return []any{OrderPlaced(c)}, nil
	}, aggregate.Create()),
)

// totalsFn is the projection function's identity.
var totalsFn = factum.Function{Context: "shop", Processor: "order_totals", Name: "on_order_placed"}

// totals is the projection: quantities by order, applied once per stream
// version, counting how often each order was applied and called.
type totals struct {
	mu       sync.Mutex
	qty      map[string]int
	version  map[string]int
	applied  map[string]int
	calls    map[string]int
	inFlight map[string]bool
	overlaps int
	// fail, when set, decides whether a call fails: it gets the order
	// and the call number (1-based) for that order.
	fail func(order string, call int) error
	// hold, when set, runs inside each call (with the order marked in
	// flight), to widen windows for concurrency tests; its error fails
	// the call.
	hold func(ctx context.Context) error
}

func newTotals() *totals {
	return &totals{qty: map[string]int{}, version: map[string]int{}, applied: map[string]int{}, calls: map[string]int{}, inFlight: map[string]bool{}}
}

func (p *totals) setFail(fn func(order string, call int) error) {
	p.mu.Lock()
	p.fail = fn
	p.mu.Unlock()
}

func (p *totals) setHold(fn func(context.Context) error) {
	p.mu.Lock()
	p.hold = fn
	p.mu.Unlock()
}

func (p *totals) handle(ctx context.Context, m event.Message, e OrderPlaced) error {
	id := m.Stream.AggregateID.ID
	p.mu.Lock()
	p.calls[id]++
	call, fail, hold := p.calls[id], p.fail, p.hold
	if p.inFlight[id] {
		p.overlaps++
	}
	p.inFlight[id] = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inFlight[id] = false
		p.mu.Unlock()
	}()
	if hold != nil {
		if err := hold(ctx); err != nil {
			return err
		}
	}
	if fail != nil {
		if err := fail(id, call); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.version[id] >= m.Stream.Version {
		return nil // a redelivery: applied already
	}
	p.version[id] = m.Stream.Version
	p.qty[id] += e.Qty
	p.applied[id]++
	return nil
}

func (p *totals) get(id string) (qty, applied, calls int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.qty[id], p.applied[id], p.calls[id]
}

func (p *totals) processor() *event.Processor {
	return event.MustProcessor(totalsFn.Context, totalsFn.Processor, factum.StageProjected,
		event.On(p.handle, event.From(orders.Named())))
}

// clock is the injected clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// options configure a fixture.
type options struct {
	clock       *clock
	totals      *totals
	snaps       snapshot.QueryStore
	checkpoints event.CheckpointStore
	config      compensation.Config
	// wrap wraps the compensation's recorder as the runtime sees it.
	wrap func(event.FailureRecorder) event.FailureRecorder
	// noCleanupShutdown leaves shutting the runtime down to the test.
	noCleanupShutdown bool
	// eventMiddleware is the runtime's Config.EventMiddleware.
	eventMiddleware []event.Middleware
}

// fixture is one running instance of the application with compensation.
type fixture struct {
	t      testing.TB
	rt     *engine.Engine
	comp   *compensation.Compensation
	svc    *compensation.Service
	sched  *compensation.Scheduler
	clock  *clock
	totals *totals
	snaps  snapshot.QueryStore
	store  eventstore.Store
}

func newFixture(t testing.TB, store eventstore.Store, o options) *fixture {
	t.Helper()
	if o.clock == nil {
		o.clock = newClock()
	}
	if o.totals == nil {
		o.totals = newTotals()
	}
	if o.snaps == nil {
		o.snaps = snapshot.NewMemory()
	}
	cfg := o.config
	cfg.Context, cfg.Snapshots, cfg.Now = "shop", o.snaps, o.clock.Now
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	comp, err := compensation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rec event.FailureRecorder = comp
	if o.wrap != nil {
		rec = o.wrap(comp)
	}
	rt, err := engine.New(engine.Config{
		Store: store, SnapshotStore: o.snaps, Checkpoints: o.checkpoints,
		Processors:      []*event.Processor{o.totals.processor()},
		Failures:        rec,
		EventMiddleware: o.eventMiddleware,
		Events: event.Config{Attempts: 1, Backoff: time.Millisecond, Now: o.clock.Now, PollInterval: 20 * time.Millisecond,
			Logger: quiet},
	}, orders, comp.Type())
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Bind(rt); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !o.noCleanupShutdown {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := rt.Shutdown(ctx); err != nil && !errors.Is(err, engine.ErrStopped) {
				t.Errorf("shutdown: %v", err)
			}
		})
	}
	return &fixture{t: t, rt: rt, comp: comp, svc: comp.Service(), sched: comp.NewScheduler(compensation.SchedulerConfig{}),
		clock: o.clock, totals: o.totals, snaps: o.snaps, store: store}
}

// place places an order and returns the ID of its event.
func (f *fixture) place(id string, qty int) string {
	f.t.Helper()
	return f.placeIn(id, factum.DefaultTenant, qty)
}

func (f *fixture) placeIn(id, tenant string, qty int) string {
	f.t.Helper()
	ctx := context.Background()
	res, err := f.rt.Gateway().SendAndWait(ctx, factum.NewCommand(orders.ID(id).WithTenant(tenant), PlaceOrder{SKU: "apple", Qty: qty}), command.Wait(factum.StageProcessed))
	if err != nil {
		f.t.Fatalf("place %s: %v", id, err)
	}
	streams, err := f.store.Load(ctx, res.AggregateID, res.AggregateVersion, res.AggregateVersion)
	if err != nil || len(streams) != 1 {
		f.t.Fatalf("load %s: %v %v", id, streams, err)
	}
	return streams[0].Events[0].ID
}

// eventually polls cond until it holds or 20 s pass.
func eventually(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %s", what, state)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// execution waits until the execution of the function on the event
// exists and satisfies cond, and its snapshot has caught up with it (so
// the scheduler's query sees what the event store holds).
func (f *fixture) execution(eventID string, cond func(compensation.Detail) bool) compensation.Detail {
	f.t.Helper()
	id := compensation.ExecutionID(totalsFn, eventID)
	var d compensation.Detail
	eventually(f.t, "execution "+id, func() (bool, string) {
		var err error
		d, err = f.svc.Get(context.Background(), id)
		if err != nil {
			return false, err.Error()
		}
		if cond != nil && !cond(d) {
			return false, fmt.Sprintf("%+v", d.Execution)
		}
		snap, err := f.snaps.Load(context.Background(), d.ID)
		if err != nil || snap.Version != d.Version {
			return false, fmt.Sprintf("snapshot at %d (%v), history at %d", snap.Version, err, d.Version)
		}
		return true, ""
	})
	return d
}

// runOnce runs one scheduler pass and checks its counts.
func (f *fixture) runOnce(s *compensation.Scheduler, due, succeeded, failed int) compensation.Report {
	f.t.Helper()
	rep, err := s.RunOnce(context.Background())
	if err != nil {
		f.t.Fatalf("RunOnce: %v", err)
	}
	if rep.Due != due || rep.Succeeded != succeeded || rep.Failed != failed || rep.Errors != 0 {
		f.t.Fatalf("pass at %v: %+v, want due %d succeeded %d failed %d", f.clock.Now(), rep, due, succeeded, failed)
	}
	return rep
}

func mustCode(t *testing.T, err error, want factum.Code) {
	t.Helper()
	if got := factum.CodeOf(err); got != want {
		t.Fatalf("error %v has code %s, want %s", err, got, want)
	}
}

// eventNames lists the event names of a history.
func eventNames(h []factum.EventStream) []string {
	var out []string
	for _, s := range h {
		for _, e := range s.Events {
			out = append(out, e.Name)
		}
	}
	return out
}

func processed() command.WaitPlan { return command.Wait(factum.StageProcessed) }

// quiet discards the logs of failures the tests cause on purpose.
var quiet = slog.New(slog.DiscardHandler)
