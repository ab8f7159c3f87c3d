package event_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// onceProbe is an event function that records every stream it handles and
// every moment two consumers handled streams of its group at once.
type onceProbe struct {
	inFlight atomic.Int32
	overlaps atomic.Int32
	mu       sync.Mutex
	handled  map[string]int
}

func (p *onceProbe) processor(t *testing.T) *event.Processor {
	t.Helper()
	p.handled = map[string]int{}
	return event.MustProcessor("shop", "probe", factum.StageEventHandled,
		event.OnStream("count", func(ctx context.Context, s *factum.EventStream) error {
			if p.inFlight.Add(1) > 1 {
				p.overlaps.Add(1)
			}
			defer p.inFlight.Add(-1)
			time.Sleep(200 * time.Microsecond)
			p.mu.Lock()
			p.handled[s.ID]++
			p.mu.Unlock()
			return nil
		}, nil))
}

func (p *onceProbe) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.handled)
}

// waitHandled waits up to 30 s for the probe to have handled n streams;
// the test's own checks then say what is missing.
func (p *onceProbe) waitHandled(n int) {
	deadline := time.Now().Add(30 * time.Second)
	for p.count() < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// fleet is the setup of the lease tests: a log of streams, the one
// checkpoint and lease store its instances share, and the probe whose
// processor they run.
type fleet struct {
	store  eventstore.Store
	cps    *event.MemoryCheckpoints
	leases *event.MemoryLeases
	probe  *onceProbe
	proc   *event.Processor
	ids    []string // the streams' IDs
}

func newFleet(t *testing.T, streams int) *fleet {
	t.Helper()
	f := &fleet{store: eventstore.NewMemory(), cps: event.NewMemoryCheckpoints(), probe: &onceProbe{}}
	f.leases = event.NewMemoryLeases(f.cps)
	f.proc = f.probe.processor(t)
	f.ids = appendN(t, f.store, streams)
	return f
}

// run starts an instance named holder, taking its leases from ls, with
// tuning's lease and batch settings (see start).
func (f *fleet) run(t *testing.T, ls event.LeaseStore, holder string, tuning event.Config) (stop func()) {
	t.Helper()
	cfg := tuning
	cfg.Log, cfg.Checkpoints, cfg.Leases, cfg.Holder = f.store, f.cps, ls, holder
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

// Three instances run one group over one store: at most one of them
// handles streams at any moment, and every stream is handled exactly once,
// also when the holder stops and another takes over.
func TestLeasedConsumersRunTheGroupOnce(t *testing.T) {
	f := newFleet(t, 300)
	probe, ids := f.probe, f.ids
	tuning := event.Config{LeaseTTL: 200 * time.Millisecond, BatchSize: 16, PollInterval: 10 * time.Millisecond}
	stops := []func(){f.run(t, f.leases, "a", tuning), f.run(t, f.leases, "b", tuning), f.run(t, f.leases, "c", tuning)}
	// Stop instances one by one while the log is consumed; the last one
	// finishes it.
	for _, stop := range stops[:2] {
		time.Sleep(20 * time.Millisecond)
		stop()
	}
	probe.waitHandled(len(ids))
	stops[2]()
	if n := probe.overlaps.Load(); n != 0 {
		t.Errorf("two instances handled the group's streams at once %d times", n)
	}
	for _, id := range ids {
		if n := probe.handled[id]; n != 1 {
			t.Errorf("stream %s handled %d times, want once", id, n)
		}
	}
}

// An instance whose lease store goes out of reach stops handling streams
// before its lease can lapse, and another instance takes the group over:
// never both at once, no stream lost.
func TestALeasedConsumerThatCannotRenewStepsDown(t *testing.T) {
	f := newFleet(t, 400)
	probe, ids := f.probe, f.ids
	cut := &flakyLeases{LeaseStore: f.leases}
	tuning := event.Config{LeaseTTL: 150 * time.Millisecond, BatchSize: 8, PollInterval: 10 * time.Millisecond, Backoff: time.Millisecond}
	stopA := f.run(t, cut, "a", tuning)
	for probe.count() == 0 {
		time.Sleep(time.Millisecond)
	}
	stopB := f.run(t, f.leases, "b", tuning)
	cut.broken.Store(true) // a can neither renew nor save
	probe.waitHandled(len(ids))
	stopA()
	stopB()
	if n := probe.overlaps.Load(); n != 0 {
		t.Errorf("the cut-off instance and its successor handled streams at once %d times", n)
	}
	if got := probe.count(); got != len(ids) {
		t.Errorf("%d of %d streams handled", got, len(ids))
	}
}
