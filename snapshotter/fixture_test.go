package snapshotter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshotter"
)

type Tally struct{ Total, Adds int }
type Bump struct{ N int }
type Bumped struct{ N int }

var tallies = aggregate.New[Tally]("snapb", "tally",
	aggregate.Source(func(s *Tally, e Bumped) { s.Total += e.N; s.Adds++ }),
	aggregate.Handle(func(_ context.Context, _ Tally, c Bump) ([]any, error) { return []any{Bumped(c)}, nil }, aggregate.AllowCreate()))

// snapshotGroup is the snapshotter's consumer group of the test context.
var snapshotGroup = factum.Function{Context: "snapb", Processor: snapshotter.Processor}

// counting is a snapshot store that counts what reaches the store it
// wraps (each snapshot of a batch is one row write), keeps the batch fast
// paths of that store, and fails saves while fail says so.
type counting struct {
	snapshot.QueryStore
	mu      sync.Mutex
	writes  map[string]int // row writes by aggregate ID
	batches []batchCall
	fail    func(call int) error // nil: never
	calls   int
	hide    bool // hide the batch fast paths
}

type batchCall struct {
	snaps        int
	checkpointed bool
}

func newCounting(qs snapshot.QueryStore) *counting {
	return &counting{QueryStore: qs, writes: map[string]int{}}
}

func (c *counting) before(snaps []snapshot.Snapshot) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.fail != nil {
		if err := c.fail(c.calls); err != nil {
			return err
		}
	}
	for _, s := range snaps {
		c.writes[s.AggregateID.ID]++
	}
	return nil
}

func (c *counting) Save(ctx context.Context, s snapshot.Snapshot) (bool, error) {
	if err := c.before([]snapshot.Snapshot{s}); err != nil {
		return false, err
	}
	return c.QueryStore.Save(ctx, s)
}

// batchStore is counting with the fast paths of the store it wraps.
type batchStore struct{ *counting }

func (c batchStore) SaveBatch(ctx context.Context, snaps []snapshot.Snapshot) ([]bool, error) {
	if err := c.before(snaps); err != nil {
		return nil, err
	}
	saved, err := c.QueryStore.(snapshotter.BatchSaver).SaveBatch(ctx, snaps)
	c.note(len(snaps), false, err)
	return saved, err
}

func (c batchStore) SaveBatchAt(ctx context.Context, snaps []snapshot.Snapshot, cps event.CheckpointStore, group factum.Function, pos factum.Position) ([]bool, bool, error) {
	if err := c.before(snaps); err != nil {
		return nil, false, err
	}
	saved, joined, err := c.QueryStore.(snapshotter.CheckpointBatchSaver).SaveBatchAt(ctx, snaps, cps, group, pos)
	c.note(len(snaps), joined, err)
	return saved, joined, err
}

func (c *counting) note(n int, joined bool, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches = append(c.batches, batchCall{n, joined})
}

// store returns c as the engine's snapshot store, with the batch fast
// paths the wrapped store has (unless hidden).
func (c *counting) store() snapshot.QueryStore {
	if c.hide {
		return c
	}
	_, b := c.QueryStore.(snapshotter.BatchSaver)
	_, cb := c.QueryStore.(snapshotter.CheckpointBatchSaver)
	switch {
	case b && cb:
		return batchStore{c}
	case b:
		return struct {
			*counting
			snapshotter.BatchSaver
		}{c, batchStore{c}}
	}
	return c
}

func (c *counting) totals() (map[string]int, []batchCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := map[string]int{}
	for k, v := range c.writes {
		w[k] = v
	}
	return w, append([]batchCall(nil), c.batches...)
}

// watcher is a signal sink that checks each SNAPSHOT signal against the
// store: the snapshot it announces must be saved already.
type watcher struct {
	store snapshot.Store
	local command.Sink
	mu    sync.Mutex
	got   map[factum.AggregateID][]int // versions signalled, by aggregate
	bad   []string
	n     int
}

func (w *watcher) Signal(s factum.Signal) {
	if s.Stage == factum.StageSnapshot {
		snap, err := w.store.Load(context.Background(), s.AggregateID)
		w.mu.Lock()
		switch {
		case s.Code != factum.CodeOk:
			w.bad = append(w.bad, fmt.Sprintf("%s v%d failed: %s", s.AggregateID.ID, s.AggregateVersion, s.Message))
		case err != nil || snap.Version < s.AggregateVersion:
			w.bad = append(w.bad, fmt.Sprintf("%s v%d signalled before its save (stored: v%d, %v)", s.AggregateID.ID, s.AggregateVersion, snap.Version, err))
		}
		w.got[s.AggregateID] = append(w.got[s.AggregateID], s.AggregateVersion)
		w.n++
		w.mu.Unlock()
	}
	w.local.Signal(s)
}

// stop shuts eng down, draining it, and fails the test on a bad SNAPSHOT
// signal the watcher saw: a failure, or one sent before its save.
func (w *watcher) stop(t *testing.T, eng *engine.Engine) {
	t.Helper()
	if err := eng.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(w.bad) > 0 {
		t.Fatalf("bad signals: %v", w.bad)
	}
}

// checkEach checks that every aggregate got per SNAPSHOT signals.
func (w *watcher) checkEach(t *testing.T, per int) {
	t.Helper()
	for id, versions := range w.got {
		if len(versions) != per {
			t.Fatalf("%s: signals for versions %v, want %d", id.ID, versions, per)
		}
	}
}

func (w *watcher) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// appendHistory appends perAggregate streams to each of n aggregates with
// no snapshotter running, so that a snapshotter started afterwards reads
// them all in one batch.
func appendHistory(t *testing.T, st engine.Storage, n, perAggregate int) {
	t.Helper()
	ctx := context.Background()
	eng, err := engine.New(engine.Config{Storage: st, DisableSnapshotter: true}, tallies)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= perAggregate; v++ {
		for a := range n {
			id := tallies.ID(fmt.Sprint("t", a))
			if _, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(id, Bump{N: v}), command.Wait(factum.StageProcessed)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := eng.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// startSnapshotter starts an engine over st whose snapshot store is
// counted, and returns it with the watcher of its signals.
func startSnapshotter(t *testing.T, st engine.Storage, c func(snapshot.QueryStore) *counting) (*engine.Engine, *counting, *watcher) {
	t.Helper()
	return startWith(t, st, c, snapshotter.SavePerBatch)
}

// startWith is startSnapshotter with the snapshotter's save mode.
func startWith(t *testing.T, st engine.Storage, c func(snapshot.QueryStore) *counting, mode snapshotter.SaveMode) (*engine.Engine, *counting, *watcher) {
	t.Helper()
	return startConsuming(t, st, c, mode, event.Config{})
}

// startConsuming is startWith with the engine's consumer settings.
func startConsuming(t *testing.T, st engine.Storage, c func(snapshot.QueryStore) *counting, mode snapshotter.SaveMode, events event.Config) (*engine.Engine, *counting, *watcher) {
	t.Helper()
	ctx := context.Background()
	qs, err := st.SnapshotStore(ctx, "snapb")
	if err != nil {
		t.Fatal(err)
	}
	cs := c(qs)
	w := &watcher{store: qs, got: map[factum.AggregateID][]int{}}
	eng, err := engine.New(engine.Config{Storage: st, SnapshotStore: cs.store(), Events: events,
		Snapshotter: snapshotter.NewComponent(snapshotter.ComponentConfig{Saves: mode}),
		Signals:     func(local command.Sink) (command.Sink, error) { w.local = local; return w, nil }}, tallies)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return eng, cs, w
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkFinal checks that every aggregate's snapshot is at its last
// version with the state of its whole history.
func checkFinal(t *testing.T, st engine.Storage, n, perAggregate int) {
	t.Helper()
	ctx := context.Background()
	qs, err := st.SnapshotStore(ctx, "snapb")
	if err != nil {
		t.Fatal(err)
	}
	want := Tally{Adds: perAggregate, Total: perAggregate * (perAggregate + 1) / 2}
	for a := range n {
		snap, got := loadTally(t, qs, tallies.ID(fmt.Sprint("t", a)))
		if snap.Version != perAggregate || got != want {
			t.Fatalf("t%d: snapshot v%d %+v, want v%d %+v", a, snap.Version, got, perAggregate, want)
		}
	}
}

// loadTally loads id's snapshot from qs and decodes its state.
func loadTally(t *testing.T, qs snapshot.QueryStore, id factum.AggregateID) (snapshot.Snapshot, Tally) {
	t.Helper()
	snap, err := qs.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("%s: %v", id.ID, err)
	}
	var got Tally
	if err := json.Unmarshal(snap.State, &got); err != nil {
		t.Fatal(err)
	}
	return snap, got
}

// checkCheckpointAtEnd checks that the snapshotter's checkpoint is at the
// log's last stream.
func checkCheckpointAtEnd(t *testing.T, st engine.Storage) {
	t.Helper()
	ctx := context.Background()
	cps, err := st.CheckpointStore(ctx, "snapb")
	if err != nil {
		t.Fatal(err)
	}
	pos, err := cps.Checkpoint(ctx, snapshotGroup)
	if err != nil {
		t.Fatal(err)
	}
	es, err := st.EventStore(ctx, "snapb")
	if err != nil {
		t.Fatal(err)
	}
	var end factum.Position
	for {
		page, err := es.ReadLog(ctx, end, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		end = page[len(page)-1].Position
	}
	if pos != end {
		t.Fatalf("snapshotter checkpoint %s, log ends at %s", pos, end)
	}
}

// checkRecovered checks a run whose first three saves failed: once every
// stream's SNAPSHOT signal is out and eng is shut down, the saves were
// tried again (more than three calls, read by calls with what went out
// early while they failed: nothing may have), every signal was right, and
// every stream is saved with the checkpoint at the log's end.
func checkRecovered(t *testing.T, st engine.Storage, eng *engine.Engine, w *watcher, n, per int, calls func() (int, []string)) {
	t.Helper()
	waitFor(t, "every stream's SNAPSHOT signal", func() bool { return w.count() == n*per })
	w.stop(t, eng)
	if c, early := calls(); c <= 3 || len(early) > 0 {
		t.Fatalf("%d save calls; while saves failed: %v", c, early)
	}
	checkFinal(t, st, n, per)
	checkCheckpointAtEnd(t, st)
}
