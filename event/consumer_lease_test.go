package event_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// fleet is the setup of the lease tests: a log of streams, the one
// checkpoint and lease store its instances share, the processor they run
// (its one function takes a moment per stream), and the ledger of what
// they do.
type fleet struct {
	store  eventstore.Store
	cps    *event.MemoryCheckpoints
	leases *event.MemoryLeases
	ledger *ledger
	proc   *event.Processor
	ids    []string // the streams' IDs
}

func newFleet(t *testing.T, streams int) *fleet {
	t.Helper()
	f := &fleet{store: eventstore.NewMemory(), cps: event.NewMemoryCheckpoints(), ledger: newLedger()}
	f.leases = event.NewMemoryLeases(f.cps)
	f.proc = event.MustProcessor("shop", "probe", factum.StageEventHandled,
		event.OnStream("count", func(ctx context.Context, s *factum.EventStream) error {
			time.Sleep(200 * time.Microsecond)
			return nil
		}, nil))
	f.ids = appendN(t, f.store, streams)
	return f
}

// run starts an instance named holder, taking its leases from ls, with
// tuning's lease and batch settings and middleware (see start); the
// ledger records what it does, outside that middleware.
func (f *fleet) run(t *testing.T, ls event.LeaseStore, holder string, tuning event.Config) (stop func()) {
	t.Helper()
	cfg := tuning
	recorded, mw := f.ledger.instance(holder, ls)
	cfg.Log, cfg.Checkpoints, cfg.Leases, cfg.Holder = f.store, f.cps, recorded, holder
	cfg.Middleware = append([]event.Middleware{mw}, tuning.Middleware...)
	c, err := event.NewConsumer(f.proc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return start(t, c)
}

func appendN(t *testing.T, store eventstore.Store, n int) []string {
	t.Helper()
	named := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	var ids []string
	for i := range n {
		s := factum.EventStream{ID: factum.NewID(), AggregateID: named.WithID(fmt.Sprintf("c-%d", i)), Version: 1,
			CommandID: factum.NewID(), RequestID: factum.NewID(), CreateTime: time.Now(),
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "added", Sequence: 1, IsLast: true, Body: json.RawMessage(`{}`)}}}
		if err := store.Append(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	return ids
}

// flakyLeases fails every call once broken, as a lease store out of reach.
type flakyLeases struct {
	event.LeaseStore
	broken atomic.Bool
}

var errUnreachable = errors.New("test: lease store unreachable")

func (f *flakyLeases) Acquire(ctx context.Context, g factum.Function, h string, ttl time.Duration) (event.Lease, error) {
	if f.broken.Load() {
		return event.Lease{}, errUnreachable
	}
	return f.LeaseStore.Acquire(ctx, g, h, ttl)
}

func (f *flakyLeases) Renew(ctx context.Context, l event.Lease, ttl time.Duration) (event.Lease, error) {
	if f.broken.Load() {
		return event.Lease{}, errUnreachable
	}
	return f.LeaseStore.Renew(ctx, l, ttl)
}

func (f *flakyLeases) SaveFencedCheckpoint(ctx context.Context, l event.Lease, pos factum.Position) error {
	if f.broken.Load() {
		return errUnreachable
	}
	return f.LeaseStore.SaveFencedCheckpoint(ctx, l, pos)
}

// Three instances run one group over one store, and two of them stop
// while the log is consumed: each stream counts exactly once, under the
// tenure whose fenced save covered it, and never under a tenure that
// another had replaced (see ledger.check). A stall longer than the lease
// (a loaded machine's) lets the lease lapse with a stream in hand: the
// stream finishes, its save is refused, and the next tenure handles it
// again, with the streams handled since the last accepted save; the
// count of handlings is therefore not asserted.
func TestLeasedConsumersRunTheGroupOnce(t *testing.T) {
	f := newFleet(t, 300)
	tuning := event.Config{LeaseTTL: 200 * time.Millisecond, BatchSize: 16, PollInterval: 10 * time.Millisecond}
	stops := []func(){f.run(t, f.leases, "a", tuning), f.run(t, f.leases, "b", tuning), f.run(t, f.leases, "c", tuning)}
	// Stop instances one by one while the log is consumed; the last one
	// finishes it.
	for _, stop := range stops[:2] {
		time.Sleep(20 * time.Millisecond)
		stop()
	}
	f.ledger.waitCounted(f.ids)
	stops[2]()
	f.ledger.check(t, f.ids)
}

// An instance whose lease store goes out of reach steps down, and another
// takes the group over: once the successor holds the lease, the cut-off
// instance finishes at most the stream in hand, which does not count (its
// save is refused; the successor handles it again), and it starts no
// other; every stream counts once (see ledger.check).
func TestALeasedConsumerThatCannotRenewStepsDown(t *testing.T) {
	f := newFleet(t, 400)
	cut := &flakyLeases{LeaseStore: f.leases}
	tuning := event.Config{LeaseTTL: 150 * time.Millisecond, BatchSize: 8, PollInterval: 10 * time.Millisecond, Backoff: time.Millisecond}
	stopA := f.run(t, cut, "a", tuning)
	waitFor(t, "a handling streams", func() bool { return f.ledger.handledBy("a") > 0 })
	stopB := f.run(t, f.leases, "b", tuning)
	cut.broken.Store(true) // a can neither renew nor save
	f.ledger.waitCounted(f.ids)
	stopA()
	stopB()
	f.ledger.check(t, f.ids)
}

// pause stops an instance as a stalled process stops: once on, its next
// handling and its renewals wait until resume is closed.
type pause struct {
	event.LeaseStore
	on     atomic.Bool
	held   chan string // receives the stream whose handling waits
	resume chan struct{}
	once   sync.Once
}

func (p *pause) Renew(ctx context.Context, l event.Lease, ttl time.Duration) (event.Lease, error) {
	if p.on.Load() {
		<-p.resume
	}
	return p.LeaseStore.Renew(ctx, l, ttl)
}

func (p *pause) middleware(h *event.Handler, next event.StreamFunc) event.StreamFunc {
	return func(ctx context.Context, s *factum.EventStream) error {
		if p.on.Load() {
			p.once.Do(func() {
				p.held <- s.ID
				<-p.resume
			})
		}
		return next(ctx, s)
	}
}

// An instance stalled with a stream in hand for longer than its lease (a
// loaded machine's pause) finishes the stream after another instance took
// the group over: the stream is handled twice, but the stalled instance's
// handling does not count, its save is refused, and the checkpoint moves
// over each stream once (see ledger.check).
func TestALeasedConsumerStalledPastItsLeaseIsFenced(t *testing.T) {
	f := newFleet(t, 200)
	p := &pause{LeaseStore: f.leases, held: make(chan string, 1), resume: make(chan struct{})}
	tuning := event.Config{LeaseTTL: 150 * time.Millisecond, BatchSize: 8, PollInterval: 10 * time.Millisecond, Backoff: time.Millisecond}
	stalled := tuning
	stalled.Middleware = []event.Middleware{p.middleware}
	stopA := f.run(t, p, "a", stalled)
	waitFor(t, "a handling streams", func() bool { return f.ledger.handledBy("a") >= 10 })
	p.on.Store(true)
	held := <-p.held
	stopB := f.run(t, f.leases, "b", tuning)
	waitFor(t, "b taking the group over", func() bool { return f.ledger.handledBy("b") > 0 })
	close(p.resume)
	f.ledger.waitCounted(f.ids)
	stopA()
	stopB()
	if got := f.ledger.holders(held); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("the stream in hand at the stall was handled by %v, want by a and again by b", got)
	}
	f.ledger.check(t, f.ids)
}
