// Package projectiontest is the contract kit of projection.Store: Run
// checks that a store's transactions make a projection's writes and its
// checkpoint commit together, across crashes, failures and rebuilds.
package projectiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/kit"
	"github.com/factum-go/factum/projection"
)

// Run runs every case against stores from open, which returns an empty
// read-model database for bounded context "shop" (a new one per call). The
// kit's SQL is portable between SQLite and PostgreSQL: $n placeholders,
// INSERT … ON CONFLICT. Its cases run in parallel (t.Parallel), and open
// is called from several goroutines.
func Run(t *testing.T, open func(t *testing.T) projection.Store) {
	t.Helper()
	cases := []kit.Case[projection.Store]{
		{Name: "ExactlyOnceAcrossCrashes", Run: exactlyOnceAcrossCrashes},
		{Name: "FailedWritesRollBack", Run: failedWritesRollBack},
		{Name: "AFailingStreamIsRecordedAndPassed", Run: aFailingStreamIsRecordedAndPassed},
		{Name: "WithoutARecorderAFailingStreamHoldsTheRunner", Run: withoutARecorderAFailingStreamHolds},
		{Name: "ResetAndReplayReplaysFromAnEmptyModel", Run: resetAndReplay},
		{Name: "SignalsFollowCommits", Run: signalsFollowCommits},
		{Name: "TwoRunnersProjectOnce", Run: twoRunnersProjectOnce},
		{Name: "ConcurrentSetUpsOfAFreshModel", Run: concurrentSetUps},
		{Name: "QueuedFailuresAreTheirStreams", Run: queuedFailuresAreTheirStreams},
	}
	cases = append(cases, builds...)
	cases = append(cases, skipped...)
	kit.RunParallel(t, open, cases)
}

var cart = factum.NamedAggregate{Context: "shop", Aggregate: "cart"}

// counts is the kit's read model: streams seen per aggregate.
type counts struct {
	table string
	// failOn, if set, decides whether to fail (after writing) on a stream.
	failOn func(s *factum.EventStream) bool
	mu     sync.Mutex
	calls  int
}

func newCounts() *counts {
	return &counts{table: "kit_counts_" + strings.ReplaceAll(factum.NewID(), "-", "")[:12]}
}

func (c *counts) projection(t *testing.T, opts ...projection.Option) *projection.Projection {
	t.Helper()
	opts = append([]projection.Option{
		projection.Events("item_added"),
		projection.Setup(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+c.table+` (aggregate_id TEXT PRIMARY KEY, n INTEGER NOT NULL)`)
			return err
		}),
		projection.Reset(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `DELETE FROM `+c.table)
			return err
		}),
	}, opts...)
	p, err := projection.New("shop", "counts", c.project, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (c *counts) project(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	if _, err := tx.Exec(ctx, `INSERT INTO `+c.table+` (aggregate_id, n) VALUES ($1, 1)
		ON CONFLICT (aggregate_id) DO UPDATE SET n = `+c.table+`.n + 1`, s.AggregateID.ID); err != nil {
		return err
	}
	if c.failOn != nil && c.failOn(s) {
		return factum.Errorf(factum.CodeIllegalState, "kit: failing on stream %s of %s", s.ID, s.AggregateID.ID)
	}
	return nil
}

// fault fails a counts' function on one stream until healed, and counts
// the tries.
type fault struct {
	healed atomic.Bool
	tries  atomic.Int32
}

// failStream makes c's function fail (after writing) on the stream with
// id until the returned fault is healed.
func (c *counts) failStream(id string) *fault {
	f := &fault{}
	c.failOn = func(s *factum.EventStream) bool {
		if f.healed.Load() || s.ID != id {
			return false
		}
		f.tries.Add(1)
		return true
	}
	return f
}

// read returns the model's counts, in a transaction of its own.
func (c *counts) read(t *testing.T, st projection.Store, ids []string) map[string]int {
	t.Helper()
	return c.readAfter(t, st, ids, nil)
}

// expect checks that the model holds the counts of want's carts.
func (c *counts) expect(t *testing.T, st projection.Store, want map[string]int) {
	t.Helper()
	if got := c.read(t, st, ids(want)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", got, want)
	}
}

// readAfter returns the model's counts in a transaction of its own, in
// which first (if not nil) runs before.
func (c *counts) readAfter(t *testing.T, st projection.Store, ids []string, first func(projection.Txn)) map[string]int {
	t.Helper()
	ctx := context.Background()
	tx, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if first != nil {
		first(tx)
	}
	out := map[string]int{}
	for _, id := range ids {
		var n int
		err := tx.QueryRow(ctx, `SELECT n FROM `+c.table+` WHERE aggregate_id = $1`, id).Scan(&n)
		if err != nil && !strings.Contains(err.Error(), "no rows") {
			t.Fatalf("read %s: %v", id, err)
		}
		out[id] = n
	}
	return out
}

// appendLog appends n streams over aggregates cart-0…cart-(aggs-1) to a new
// memory store, and an unrelated event every seventh stream, which the
// projection must not see. It returns the store and the item_added streams
// per aggregate.
func appendLog(t *testing.T, n, aggs int) (*eventstore.Memory, map[string]int, []factum.EventStream) {
	t.Helper()
	store := eventstore.NewMemory()
	want := map[string]int{}
	versions := map[string]int{}
	var all []factum.EventStream
	for i := range n {
		id := fmt.Sprintf("cart-%d", i%aggs)
		versions[id]++
		name := "item_added"
		if i%7 == 6 {
			name = "cart_viewed"
		} else {
			want[id]++
		}
		s := factum.EventStream{
			ID: factum.NewID(), AggregateID: cart.WithID(id), Version: versions[id], CommandID: factum.NewID(),
			RequestID: factum.NewID(), CreateTime: time.Now(),
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: name, Sequence: 1, IsLast: true, Body: json.RawMessage(`{}`)}},
		}
		if err := store.Append(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
		all = append(all, s)
	}
	return store, want, all
}

func ids(want map[string]int) []string {
	out := make([]string, 0, len(want))
	for id := range want {
		out = append(out, id)
	}
	return out
}

func newRunner(t *testing.T, p *projection.Projection, cfg projection.Config) *projection.Runner {
	t.Helper()
	if cfg.Backoff == 0 {
		cfg.Backoff = time.Millisecond
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 10 * time.Millisecond
	}
	r, err := projection.NewRunner(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runUntilTried runs r until the failing stream has been tried n times, so
// that a case does not depend on how far a loaded machine gets in a fixed
// time (the kit's cases run in parallel).
func runUntilTried(t *testing.T, r *projection.Runner, tries *atomic.Int32, n int32) {
	t.Helper()
	runUntil(r, func() bool { return tries.Load() >= n }, 0)
	if got := tries.Load(); got < n {
		t.Fatalf("the failing stream was tried %d times in a minute, want %d", got, n)
	}
}

// runUntil runs r until done holds, then for linger more, and stops it;
// it stops r after a minute whatever done says.
func runUntil(r *projection.Runner, done func() bool, linger time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		for ctx.Err() == nil && !done() {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(linger)
		cancel()
	}()
	_ = r.Run(ctx)
}

// drain runs r until it has projected the whole log.
func drain(t *testing.T, r *projection.Runner) {
	t.Helper()
	r.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the runner did not finish the log")
	}
}

// A runner stopped at random moments, many times, and transient failures
// after the function wrote: every stream counts exactly once.
func exactlyOnceAcrossCrashes(t *testing.T, st projection.Store) {
	log, want, _ := appendLog(t, 300, 17)
	c := newCounts()
	rng := rand.New(rand.NewPCG(1, 2))
	var mu sync.Mutex
	c.failOn = func(*factum.EventStream) bool {
		mu.Lock()
		defer mu.Unlock()
		return rng.IntN(10) == 0
	}
	p := c.projection(t)
	for round := range 20 {
		r := newRunner(t, p, projection.Config{Log: log, Store: st, BatchSize: 1 + round%8, Attempts: 1000})
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(20))*time.Millisecond)
		_ = r.Run(ctx)
		cancel()
	}
	c.failOn = nil
	drain(t, newRunner(t, p, projection.Config{Log: log, Store: st}))
	c.expect(t, st, want)
}

// A function that fails after writing leaves nothing of its stream: the
// streams before it in the batch commit, it and those after it do not.
func failedWritesRollBack(t *testing.T, st projection.Store) {
	log, want, all := appendLog(t, 20, 4)
	c := newCounts()
	fault := c.failStream(all[10].ID)
	r := newRunner(t, c.projection(t), projection.Config{Log: log, Store: st, BatchSize: 64})
	runUntilTried(t, r, &fault.tries, 3)
	before := map[string]int{}
	for _, s := range all[:10] {
		if s.Events[0].Name == "item_added" {
			before[s.AggregateID.ID]++
		}
	}
	if got := c.read(t, st, ids(want)); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("counts %v while stream 10 fails, want %v (the streams before it)", got, before)
	}
	fault.healed.Store(true)
	drain(t, r)
	c.expect(t, st, want)
}

// A stream the function keeps failing on is recorded once, with the
// attempts made; the streams before and after it count, it does not.
func aFailingStreamIsRecordedAndPassed(t *testing.T, st projection.Store) {
	log, want, all := appendLog(t, 30, 3)
	c := newCounts()
	bad := all[12]
	c.failStream(bad.ID)
	var recorded []event.Failure
	rec := event.FailureRecorderFunc(func(_ context.Context, f event.Failure) error {
		recorded = append(recorded, f)
		return nil
	})
	p := c.projection(t)
	drain(t, newRunner(t, p, projection.Config{Log: log, Store: st, Failures: rec, Attempts: 3, BatchSize: 8}))
	if len(recorded) != 1 {
		t.Fatalf("%d failures recorded, want 1: %v", len(recorded), recorded)
	}
	f := recorded[0]
	if f.Stream.ID != bad.ID || f.Function != p.Function() || f.Stage != factum.StageProjected || f.Attempts != 3 ||
		f.EventID != bad.Events[0].ID || factum.CodeOf(f.Err) != factum.CodeIllegalState {
		t.Errorf("recorded %+v", f)
	}
	want[bad.AggregateID.ID]--
	c.expect(t, st, want)
}

// Without a recorder, and when recording fails, the runner never moves
// past a failing stream: what comes after it is not projected.
func withoutARecorderAFailingStreamHolds(t *testing.T, st projection.Store) {
	log, want, all := appendLog(t, 12, 12)
	c := newCounts()
	fault := c.failStream(all[5].ID)
	broken := event.FailureRecorderFunc(func(context.Context, event.Failure) error { return errors.New("kit: recorder down") })
	for _, rec := range []event.FailureRecorder{nil, broken} {
		r := newRunner(t, c.projection(t), projection.Config{Log: log, Store: st, Failures: rec, Attempts: 2, BatchSize: 4})
		fault.tries.Store(0)
		// Past its attempts, so a runner that moved on would have.
		runUntilTried(t, r, &fault.tries, 4)
		got := c.read(t, st, ids(want))
		for i, s := range all {
			n := got[s.AggregateID.ID]
			if i < 5 && s.Events[0].Name == "item_added" && n != 1 || i >= 5 && n != 0 {
				t.Errorf("recorder %v: stream %d (%s) counts %d", rec != nil, i, s.AggregateID.ID, n)
			}
		}
	}
}

// ResetAndReplay empties the model and the checkpoint together; the next
// run replays the whole log into it.
func resetAndReplay(t *testing.T, st projection.Store) {
	log, want, _ := appendLog(t, 40, 5)
	c := newCounts()
	p := c.projection(t)
	drain(t, newRunner(t, p, projection.Config{Log: log, Store: st}))
	r := newRunner(t, p, projection.Config{Log: log, Store: st})
	if err := r.ResetAndReplay(context.Background()); err != nil {
		t.Fatal(err)
	}
	for id, n := range c.read(t, st, ids(want)) {
		if n != 0 {
			t.Errorf("%s counts %d after the reset, want 0", id, n)
		}
	}
	drain(t, r)
	if got := c.read(t, st, ids(want)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counts %v after the rebuild, want %v", got, want)
	}
	noReset, err := projection.New("shop", "no_reset", c.project)
	if err != nil {
		t.Fatal(err)
	}
	if err := newRunner(t, noReset, projection.Config{Log: log, Store: st}).ResetAndReplay(context.Background()); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("ResetAndReplay without Reset: %v, want IllegalArgument", err)
	}
}

// A PROJECTED signal comes once per consumed stream, after its commit:
// none for a stream the projection does not consume, none for attempts
// that rolled back.
func signalsFollowCommits(t *testing.T, st projection.Store) {
	log, _, all := appendLog(t, 50, 6)
	c := newCounts()
	rng := rand.New(rand.NewPCG(3, 4))
	c.failOn = func(*factum.EventStream) bool { return rng.IntN(5) == 0 }
	var mu sync.Mutex
	got := map[string]int{}
	notify := func(s factum.Signal) {
		mu.Lock()
		defer mu.Unlock()
		if s.Stage != factum.StageProjected || !s.Succeeded() || s.Function.Processor != "counts" {
			t.Errorf("signal %+v", s)
		}
		got[s.CommandID]++
	}
	drain(t, newRunner(t, c.projection(t), projection.Config{Log: log, Store: st, Notify: notify, Attempts: 1000, BatchSize: 5}))
	for _, s := range all {
		want := 1
		if s.Events[0].Name != "item_added" {
			want = 0
		}
		if got[s.CommandID] != want {
			t.Errorf("stream %s (%s): %d signals, want %d", s.ID, s.Events[0].Name, got[s.CommandID], want)
		}
	}
}

// Two runners of one projection on one store (two instances, or a rolling
// deploy) take turns: every stream counts exactly once between them.
func twoRunnersProjectOnce(t *testing.T, st projection.Store) {
	log, want, _ := appendLog(t, 200, 13)
	c := newCounts()
	p := c.projection(t)
	var wg sync.WaitGroup
	for range 2 {
		r := newRunner(t, p, projection.Config{Log: log, Store: st, BatchSize: 8})
		wg.Go(func() { drain(t, r) })
	}
	wg.Wait()
	c.expect(t, st, want)
}
