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

// runInstance starts a consumer of proc with cfg, as one instance of a
// fleet (see start).
func runInstance(t *testing.T, proc *event.Processor, cfg event.Config) (stop func()) {
	t.Helper()
	c, err := event.NewConsumer(proc, cfg)
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
	store, cps := eventstore.NewMemory(), event.NewMemoryCheckpoints()
	leases := event.NewMemoryLeases(cps)
	probe := &onceProbe{}
	proc := probe.processor(t)
	ids := appendN(t, store, 300)
	start := func(holder string) (stop func()) {
		return runInstance(t, proc, event.Config{Log: store, Checkpoints: cps, Leases: leases, Holder: holder,
			LeaseTTL: 200 * time.Millisecond, BatchSize: 16, PollInterval: 10 * time.Millisecond})
	}
	stops := []func(){start("a"), start("b"), start("c")}
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
	store, cps := eventstore.NewMemory(), event.NewMemoryCheckpoints()
	leases := event.NewMemoryLeases(cps)
	probe := &onceProbe{}
	proc := probe.processor(t)
	ids := appendN(t, store, 400)
	cut := &flakyLeases{LeaseStore: leases}
	run := func(ls event.LeaseStore, holder string) (stop func()) {
		return runInstance(t, proc, event.Config{Log: store, Checkpoints: cps, Leases: ls, Holder: holder,
			LeaseTTL: 150 * time.Millisecond, BatchSize: 8, PollInterval: 10 * time.Millisecond, Backoff: time.Millisecond})
	}
	stopA := run(cut, "a")
	for probe.count() == 0 {
		time.Sleep(time.Millisecond)
	}
	stopB := run(leases, "b")
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
