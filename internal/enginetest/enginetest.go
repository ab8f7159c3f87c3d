// Package enginetest runs the same end-to-end checks of a runtime on each
// durable backend: the cart example with its event store, snapshot store
// and checkpoints on one database, read back through a query service, then
// restarted on the same database. Start and Run run an engine for the
// length of a test.
package enginetest

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

// Stores are a backend's stores of bounded context "shop" on one
// database.
type Stores struct {
	Events      eventstore.Store
	Snapshots   QueryableSnapshots
	Checkpoints event.CheckpointStore
	// Close closes the stores and their database.
	Close func() error
}

// QueryableSnapshots is a snapshot store with queries.
type QueryableSnapshots interface {
	snapshot.Store
	snapshot.Querier
}

// Open opens the stores on the same database at every call.
type Open func(t *testing.T) Stores

// countingLog counts the streams the consumers read from the log.
type countingLog struct {
	eventstore.Store
	read atomic.Int64
}

func (l *countingLog) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	streams, err := l.Store.ReadLog(ctx, after, limit)
	l.read.Add(int64(len(streams)))
	return streams, err
}

// countingSnapshots counts the snapshotter's saves.
type countingSnapshots struct {
	snapshot.Store
	saves atomic.Int64
}

func (s *countingSnapshots) Save(ctx context.Context, snap snapshot.Snapshot) (bool, error) {
	s.saves.Add(1)
	return s.Store.Save(ctx, snap)
}

// run is one run of the cart service.
type run struct {
	stores Stores
	log    *countingLog
	saves  *countingSnapshots
	rt     *engine.Engine
}

func start(t *testing.T, open Open) *run {
	t.Helper()
	r := &run{stores: open(t)}
	r.log = &countingLog{Store: r.stores.Events}
	r.saves = &countingSnapshots{Store: r.stores.Snapshots}
	carts := cart.New(cart.Items{"sku-1": true, "sku-2": true}, cart.DefaultLimits)
	var err error
	if r.rt, err = engine.New(engine.Config{Store: r.log, SnapshotStore: r.saves, Checkpoints: r.stores.Checkpoints}, carts); err != nil {
		t.Fatal(err)
	}
	if err := r.rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *run) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.stores.Close(); err != nil {
		t.Fatal(err)
	}
}

// addItem sends AddItem and waits for the aggregate's snapshot.
func addItem(t *testing.T, rt *engine.Engine, id, sku string, qty, wantVersion int) {
	t.Helper()
	carts := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	res, err := rt.Gateway().SendAndWait(context.Background(),
		factum.NewCommand(carts.WithID(id), cart.AddItem{SKU: sku, Qty: qty}), command.Wait(factum.StageSnapshot))
	if err != nil {
		t.Fatalf("add %d %s to %s: %v", qty, sku, id, err)
	}
	if res.Stage != factum.StageSnapshot || res.AggregateVersion != wantVersion {
		t.Fatalf("add to %s: stage %s version %d, want SNAPSHOT at version %d", id, res.Stage, res.AggregateVersion, wantVersion)
	}
}

// cartStates reads every cart's version and items through a query
// service, in aggregate ID order.
func cartStates(t *testing.T, store snapshot.Querier) map[string]string {
	t.Helper()
	svc, err := snapshot.NewQueryService(store, factum.NamedAggregate{Context: "shop", Aggregate: "cart"}, query.Planner{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := svc.List(context.Background(), query.Query{Sort: []query.Sort{query.SortAsc("aggregateId")}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var order []string
	for _, s := range list {
		var items struct{ Items map[string]int }
		if err := json.Unmarshal(s.State, &items); err != nil {
			t.Fatalf("state of %s: %v", s.AggregateID.ID, err)
		}
		keys := make([]string, 0, len(items.Items))
		for k := range items.Items {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		desc := "v" + strconv.Itoa(s.Version)
		for _, k := range keys {
			desc += " " + k + "=" + strconv.Itoa(items.Items[k])
		}
		out[s.AggregateID.ID] = desc
		order = append(order, s.AggregateID.ID)
	}
	if !slices.IsSorted(order) {
		t.Errorf("carts out of order: %v", order)
	}
	return out
}

// CartService runs the cart example on a runtime whose event store,
// snapshot store and checkpoints are all on one database, reads the carts
// back through a query service, then restarts on the same database: the
// snapshotter resumes from its durable checkpoint and reads, folds and
// saves only the new stream, and the command side loads an aggregate from
// its snapshot and the tail.
func CartService(t *testing.T, open Open) {
	r := start(t, open)
	addItem(t, r.rt, "cart-1", "sku-1", 2, 1)
	addItem(t, r.rt, "cart-1", "sku-2", 1, 2)
	addItem(t, r.rt, "cart-2", "sku-1", 5, 1)
	addItem(t, r.rt, "cart-1", "sku-1", 3, 3)
	want := map[string]string{"cart-1": "v3 sku-1=5 sku-2=1", "cart-2": "v1 sku-1=5"}
	if got := cartStates(t, r.stores.Snapshots); !maps.Equal(got, want) {
		t.Fatalf("carts = %v, want %v", got, want)
	}
	if n := r.saves.saves.Load(); n != 4 {
		t.Errorf("first run: %d snapshot saves, want 4", n)
	}
	streams, err := r.stores.Events.ReadLog(context.Background(), factum.Position{}, 100)
	if err != nil || len(streams) != 4 {
		t.Fatalf("log: %d streams, %v", len(streams), err)
	}
	r.stop(t)

	// The checkpoint is durable: the database holds the snapshotter's
	// position at the last stream.
	stores := open(t)
	group := factum.Function{Context: "shop", Processor: engine.SnapshotProcessor}
	if pos, err := stores.Checkpoints.Checkpoint(context.Background(), group); err != nil || pos != streams[3].Position {
		t.Fatalf("snapshotter checkpoint after the first run = %s, %v; want %s", pos, err, streams[3].Position)
	}
	if err := stores.Close(); err != nil {
		t.Fatal(err)
	}

	r = start(t, open)
	defer r.stop(t)
	addItem(t, r.rt, "cart-2", "sku-2", 4, 2)
	want["cart-2"] = "v2 sku-1=5 sku-2=4"
	if got := cartStates(t, r.stores.Snapshots); !maps.Equal(got, want) {
		t.Fatalf("after the restart, carts = %v, want %v", got, want)
	}
	if n := r.log.read.Load(); n != 1 {
		t.Errorf("after the restart the consumers read %d streams, want 1 (the new one)", n)
	}
	if n := r.saves.saves.Load(); n != 1 {
		t.Errorf("after the restart the snapshotter saved %d times, want 1", n)
	}
	// The command side loaded cart-2 from its snapshot and the tail.
	addItem(t, r.rt, "cart-1", "sku-2", 1, 4)
}

// Start makes an engine of cfg and types and runs it (Run); it fails t
// if the engine cannot be made.
func Start(t testing.TB, cfg engine.Config, types ...aggregate.Type) *engine.Engine {
	t.Helper()
	eng, err := engine.New(cfg, types...)
	if err != nil {
		t.Fatal(err)
	}
	Run(t, eng)
	return eng
}

// Run starts eng and shuts it down at t's clean-up; it fails t if eng
// does not start, or if its shutdown, given 30 s, returns an error
// (ErrStopped aside: a test may shut it down itself).
func Run(t testing.TB, eng *engine.Engine) {
	t.Helper()
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := eng.Shutdown(ctx); err != nil && !errors.Is(err, engine.ErrStopped) {
			t.Errorf("shutdown: %v", err)
		}
	})
}
