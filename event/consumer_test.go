package event_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

var carts = factum.NamedAggregate{Context: "shop", Aggregate: "cart"}

// quiet discards the log lines that failure tests provoke on purpose.
var quiet = slog.New(slog.DiscardHandler)

type ItemAdded struct {
	SKU string `json:"sku"`
}

type ItemRemoved struct {
	SKU string `json:"sku"`
}

// appendStream appends a stream of the given events (name -> body) to the
// aggregate at the next version.
func appendStream(t *testing.T, st eventstore.Store, id string, version int, names ...string) *factum.EventStream {
	t.Helper()
	s := &factum.EventStream{
		ID: factum.NewID(), AggregateID: carts.WithID(id), Version: version,
		CommandID: factum.NewID(), RequestID: factum.NewID(), CreateTime: time.Now(),
	}
	for i, n := range names {
		s.Events = append(s.Events, factum.DomainEvent{
			ID: factum.NewID(), Name: n, Sequence: i + 1, IsLast: i == len(names)-1,
			Body: fmt.Appendf(nil, `{"sku":"%s-%d-%d"}`, id, version, i),
		})
	}
	if err := st.Append(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// recorder collects what functions saw and the signals sent.
type recorder struct {
	mu      sync.Mutex
	seen    []string // sku of each ItemAdded, in delivery order
	signals []factum.Signal
}

func (r *recorder) notify(s factum.Signal) {
	r.mu.Lock()
	r.signals = append(r.signals, s)
	r.mu.Unlock()
}

func (r *recorder) add(sku string) {
	r.mu.Lock()
	r.seen = append(r.seen, sku)
	r.mu.Unlock()
}

func (r *recorder) snapshot() ([]string, []factum.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...), append([]factum.Signal(nil), r.signals...)
}

// waitFor polls cond until it holds or the test's deadline nears.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// start runs c until the returned stop (or the test's end), which cancels
// it, waits for it to return and fails the test if Run returned an error.
func start(t *testing.T, c *event.Consumer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("consumer returned %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestConsumerDeliversInOrderAndSignals(t *testing.T) {
	st := eventstore.NewMemory()
	rec := &recorder{}
	var removed atomic.Int32
	p := event.MustProcessor("shop", "cart_summary", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { rec.add(e.SKU); return nil }),
		event.On(func(ctx context.Context, m event.Message, e ItemRemoved) error { removed.Add(1); return nil }),
	)
	c, err := event.NewConsumer(p, event.Config{
		Log: st, Checkpoints: event.NewMemoryCheckpoints(), Notify: rec.notify,
		PollInterval: time.Hour, // only a wake-up can deliver in time
	})
	if err != nil {
		t.Fatal(err)
	}
	start(t, c)
	s1 := appendStream(t, st, "a", 1, "item_added", "item_added")
	appendStream(t, st, "b", 1, "item_removed")
	appendStream(t, st, "a", 2, "item_added")
	appendStream(t, st, "a", 3, "cart_checked_out") // consumed by nobody
	waitFor(t, "three ItemAdded and one ItemRemoved", func() bool {
		seen, _ := rec.snapshot()
		return len(seen) == 3 && removed.Load() == 1
	})
	seen, _ := rec.snapshot()
	want := []string{"a-1-0", "a-1-1", "a-2-0"}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("delivered %v, want %v", seen, want)
		}
	}
	waitFor(t, "signals", func() bool { _, s := rec.snapshot(); return len(s) == 3 })
	_, signals := rec.snapshot()
	first := signals[0]
	if first.CommandID != s1.CommandID || first.Stage != factum.StageProjected || !first.Succeeded() ||
		first.Function != (factum.Function{Context: "shop", Processor: "cart_summary", Name: "on_item_added"}) || first.AggregateVersion != 1 {
		t.Fatalf("first signal = %+v", first)
	}
	for _, s := range signals {
		if s.AggregateID.ID == "a" && s.AggregateVersion == 3 {
			t.Fatalf("a stream nobody consumes was signalled: %+v", s)
		}
	}
}

func TestConsumerResumesFromCheckpoint(t *testing.T) {
	st := eventstore.NewMemory()
	cps := event.NewMemoryCheckpoints()
	rec := &recorder{}
	p := event.MustProcessor("shop", "counter", factum.StageEventHandled,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { rec.add(e.SKU); return nil }))
	newConsumer := func() *event.Consumer {
		c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: cps, BatchSize: 7})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	const total = 300
	var mu sync.Mutex
	appended := 0
	versions := map[string]int{}
	appendSome := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		for range n {
			appended++
			id := fmt.Sprintf("agg-%d", appended%5)
			versions[id]++
			appendStream(t, st, id, versions[id], "item_added")
		}
	}
	// Appends keep coming while the consumer is stopped and restarted.
	for round := range 6 {
		stop := start(t, newConsumer())
		appendSome(total / 6 / 2)
		time.Sleep(time.Duration(round) * time.Millisecond)
		appendSome(total / 6 / 2)
		stop()
	}
	stop := start(t, newConsumer())
	defer stop()
	waitFor(t, "every stream", func() bool { seen, _ := rec.snapshot(); return len(seen) >= total })
	stop()
	seen, _ := rec.snapshot()
	if len(seen) != total {
		t.Fatalf("delivered %d events, want %d (some applied twice)", len(seen), total)
	}
	dup := map[string]bool{}
	for _, s := range seen {
		if dup[s] {
			t.Fatalf("event %s applied twice", s)
		}
		dup[s] = true
	}
	pos, _ := cps.Checkpoint(context.Background(), p.Name())
	if pos.Seq != total {
		t.Fatalf("checkpoint %v, want seq %d", pos, total)
	}
}

func TestConsumerRetriesThenRecordsFailure(t *testing.T) {
	st := eventstore.NewMemory()
	rec := &recorder{}
	var calls atomic.Int32
	var failures []event.Failure
	var mu sync.Mutex
	p := event.MustProcessor("shop", "flaky", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error {
			calls.Add(1)
			if e.SKU == "bad-1-0" {
				return errors.New("database is down")
			}
			rec.add(e.SKU)
			return nil
		}),
		event.On(func(ctx context.Context, m event.Message, e ItemRemoved) error {
			panic("boom")
		}),
	)
	c, _ := event.NewConsumer(p, event.Config{
		Log: st, Checkpoints: event.NewMemoryCheckpoints(), Notify: rec.notify,
		Attempts: 3, Backoff: time.Millisecond,
		Failures: event.FailureRecorderFunc(func(ctx context.Context, f event.Failure) error {
			mu.Lock()
			failures = append(failures, f)
			mu.Unlock()
			return nil
		}),
	})
	start(t, c)
	bad := appendStream(t, st, "bad", 1, "item_added")
	appendStream(t, st, "good", 1, "item_added")
	panicky := appendStream(t, st, "panicky", 1, "item_removed")
	waitFor(t, "the good stream after the failing one", func() bool { seen, _ := rec.snapshot(); return len(seen) == 1 })
	waitFor(t, "two failures", func() bool { mu.Lock(); defer mu.Unlock(); return len(failures) == 2 })
	if calls.Load() != 4 {
		t.Fatalf("function called %d times, want 3 attempts + 1 success", calls.Load())
	}
	mu.Lock()
	f := failures[0]
	mu.Unlock()
	if f.Attempts != 3 || f.Stream.ID != bad.ID || f.EventID != bad.Events[0].ID || f.Function.Name != "on_item_added" {
		t.Fatalf("failure = %+v", f)
	}
	if failures[1].Stream.ID != panicky.ID || factum.CodeOf(failures[1].Err) != factum.CodeInternalServerError {
		t.Fatalf("panic failure = %+v", failures[1])
	}
	waitFor(t, "three signals", func() bool { _, s := rec.snapshot(); return len(s) == 3 })
	_, signals := rec.snapshot()
	if signals[0].Succeeded() || signals[0].CommandID != bad.CommandID || signals[0].Message == "" {
		t.Fatalf("failure signal = %+v", signals[0])
	}
	if !signals[1].Succeeded() {
		t.Fatalf("success signal = %+v", signals[1])
	}
}

func TestConsumerDoesNotAdvanceWhenRecordingFails(t *testing.T) {
	st := eventstore.NewMemory()
	cps := event.NewMemoryCheckpoints()
	var recordOK atomic.Bool
	var recorded atomic.Int32
	p := event.MustProcessor("shop", "failing", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { return errors.New("always") }))
	c, _ := event.NewConsumer(p, event.Config{
		Log: st, Checkpoints: cps, Attempts: 1, Backoff: time.Millisecond, Logger: quiet,
		Failures: event.FailureRecorderFunc(func(ctx context.Context, f event.Failure) error {
			if !recordOK.Load() {
				return errors.New("compensation store down")
			}
			recorded.Add(1)
			return nil
		}),
	})
	start(t, c)
	s := appendStream(t, st, "x", 1, "item_added")
	time.Sleep(30 * time.Millisecond)
	if pos, _ := cps.Checkpoint(context.Background(), p.Name()); !pos.IsZero() {
		t.Fatalf("checkpoint advanced to %v past an unrecorded failure", pos)
	}
	recordOK.Store(true)
	waitFor(t, "the failure recorded", func() bool { return recorded.Load() == 1 })
	waitFor(t, "checkpoint past the stream", func() bool {
		pos, _ := cps.Checkpoint(context.Background(), p.Name())
		return pos == s.Position
	})
}

func TestSlowConsumerDoesNotBlockOthers(t *testing.T) {
	st := eventstore.NewMemory()
	release := make(chan struct{})
	slow := event.MustProcessor("shop", "slow", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { <-release; return nil }))
	rec := &recorder{}
	fast := event.MustProcessor("shop", "fast", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { rec.add(e.SKU); return nil }))
	for _, p := range []*event.Processor{slow, fast} {
		c, _ := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints()})
		start(t, c)
	}
	for v := 1; v <= 50; v++ {
		appendStream(t, st, "a", v, "item_added")
	}
	waitFor(t, "the fast consumer", func() bool { seen, _ := rec.snapshot(); return len(seen) == 50 })
	close(release)
}

func TestFromRestrictsAggregates(t *testing.T) {
	st := eventstore.NewMemory()
	rec := &recorder{}
	orders := factum.NamedAggregate{Context: "shop", Aggregate: "order"}
	p := event.MustProcessor("shop", "orders_only", factum.StageEventHandled,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { rec.add(e.SKU); return nil }, event.From(orders)))
	c, _ := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints()})
	start(t, c)
	appendStream(t, st, "cart-1", 1, "item_added") // a cart: not delivered
	o := &factum.EventStream{ID: factum.NewID(), AggregateID: orders.WithID("o-1"), Version: 1, CommandID: "c", RequestID: "r",
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: []byte(`{"sku":"from-order"}`)}}}
	if err := st.Append(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the order event", func() bool { seen, _ := rec.snapshot(); return len(seen) == 1 })
	if seen, _ := rec.snapshot(); seen[0] != "from-order" {
		t.Fatalf("delivered %v", seen)
	}
}

func TestRegistryFunctionsFor(t *testing.T) {
	noop := func(ctx context.Context, m event.Message, e ItemAdded) error { return nil }
	proj := event.MustProcessor("shop", "summary", factum.StageProjected, event.On(noop))
	handler := event.MustProcessor("shop", "mailer", factum.StageEventHandled, event.On(noop))
	r, err := event.NewRegistry(proj, handler)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.FunctionsFor(factum.StageProjected, carts, []string{"item_added"}); len(got) != 1 || got[0].Processor != "summary" {
		t.Fatalf("FunctionsFor PROJECTED = %v", got)
	}
	if got := r.FunctionsFor(factum.StageProjected, carts, []string{"cart_cleared"}); len(got) != 0 {
		t.Fatalf("FunctionsFor of an unconsumed event = %v", got)
	}
	// The answers are cached; adding a processor must not leave them stale.
	more := event.MustProcessor("shop", "stats", factum.StageProjected, event.On(noop))
	if err := r.Add(more); err != nil {
		t.Fatal(err)
	}
	if got := r.FunctionsFor(factum.StageProjected, carts, []string{"item_added"}); len(got) != 2 {
		t.Fatalf("FunctionsFor PROJECTED after Add = %v", got)
	}
	if _, err := event.NewRegistry(proj, proj); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Fatalf("duplicate processor: %v", err)
	}
}

func TestNewProcessorRefusesBadDefinitions(t *testing.T) {
	noop := func(ctx context.Context, m event.Message, e ItemAdded) error { return nil }
	tests := []struct {
		name string
		err  func() error
	}{
		{"no functions", func() error { _, err := event.NewProcessor("shop", "p", factum.StageProjected); return err }},
		{"not a branch stage", func() error {
			_, err := event.NewProcessor("shop", "p", factum.StageProcessed, event.On(noop))
			return err
		}},
		{"bad name", func() error {
			_, err := event.NewProcessor("shop", "has space", factum.StageProjected, event.On(noop))
			return err
		}},
		{"duplicate function", func() error {
			_, err := event.NewProcessor("shop", "p", factum.StageProjected, event.On(noop), event.On(noop))
			return err
		}},
	}
	for _, tt := range tests {
		if err := tt.err(); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: err = %v, want IllegalArgument", tt.name, err)
		}
	}
}

func TestDrainReturnsOnceCaughtUp(t *testing.T) {
	st := eventstore.NewMemory()
	rec := &recorder{}
	p := event.MustProcessor("shop", "drained", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { rec.add(e.SKU); return nil }))
	for v := 1; v <= 100; v++ {
		appendStream(t, st, "a", v, "item_added")
	}
	c, _ := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), BatchSize: 10, PollInterval: time.Hour})
	c.Drain()
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if seen, _ := rec.snapshot(); len(seen) != 100 {
		t.Fatalf("drained after %d streams, want 100", len(seen))
	}
}

func TestDrainWakesAWaitingConsumer(t *testing.T) {
	st := eventstore.NewMemory()
	p := event.MustProcessor("shop", "idle", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { return nil }))
	c, _ := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), PollInterval: time.Hour})
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	time.Sleep(20 * time.Millisecond) // let it park in WaitLog
	c.Drain()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Drain did not wake a consumer waiting for appends")
	}
}
