package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

func TestSnapshotWaitIsReadAfterWrite(t *testing.T) {
	snaps := snapshot.NewMemory()
	rt, _ := newRuntime(t, engine.Config{SnapshotStore: snaps}, nil)
	qs, err := snapshot.NewQueryService(snaps, counters, query.Planner{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	total := 0
	for i := 1; i <= 1000; i++ {
		id := counters.WithID(fmt.Sprintf("c-%d", i%10))
		res, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: i}), command.Wait(factum.StageSnapshot))
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		if res.Stage != factum.StageSnapshot || res.Function.Processor != engine.SnapshotProcessor {
			t.Fatalf("result = %+v", res)
		}
		got, err := qs.Single(ctx, query.Query{Condition: query.AggregateID(id.ID)})
		if err != nil {
			t.Fatalf("query after SNAPSHOT of command %d: %v", i, err)
		}
		if got.Version != res.AggregateVersion {
			t.Fatalf("command %d: snapshot at version %d, command reached %d", i, got.Version, res.AggregateVersion)
		}
		total += i
	}
	var sum int
	list, err := qs.List(ctx, query.Query{Limit: 100})
	if err != nil || len(list) != 10 {
		t.Fatalf("list = %d snapshots, %v", len(list), err)
	}
	for _, s := range list {
		var c Counter
		if err := json.Unmarshal(s.State, &c); err != nil {
			t.Fatal(err)
		}
		sum += c.Total
		if s.FirstEventTime.IsZero() || s.EventTime.Before(s.FirstEventTime) || s.EventID == "" {
			t.Fatalf("snapshot metadata: %+v", s)
		}
	}
	if sum != total {
		t.Fatalf("snapshots sum to %d, want %d", sum, total)
	}
	n, err := qs.Count(ctx, query.Gte("state.Adds", 100))
	if err != nil || n != 10 {
		t.Fatalf("count of counters with 100 adds = %d, %v", n, err)
	}
}

func TestVersionOffsetSignalsAndProcessorLoadsFromSnapshot(t *testing.T) {
	snaps := snapshot.NewMemory()
	store := eventstore.NewMemory()
	rt, _ := newRuntime(t, engine.Config{Store: store, SnapshotStore: snaps, SnapshotStrategy: snapshot.VersionOffset(3)}, nil)
	ctx := context.Background()
	id := counters.WithID("offset")
	for i := 1; i <= 7; i++ {
		// SNAPSHOT is signalled whether the strategy saves or skips.
		if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), command.Wait(factum.StageSnapshot)); err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
	}
	s, err := snaps.Load(ctx, id)
	if err != nil || s.Version != 6 {
		t.Fatalf("snapshot = v%d, %v; want v6 (saved at 3 and 6)", s.Version, err)
	}
	// A second runtime over the same stores, with no cache, starts from
	// the snapshot and the tail.
	spy := &loadSpy{Store: store}
	rt2, _ := newRuntime(t, engine.Config{Store: spy, SnapshotStore: snaps, SnapshotStrategy: snapshot.VersionOffset(3), CacheSize: -1, Lanes: 1}, nil)
	res, err := rt2.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), command.Wait(factum.StageProcessed))
	if err != nil || res.AggregateVersion != 8 {
		t.Fatalf("command on the second runtime = %+v, %v", res, err)
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(spy.froms) == 0 || spy.froms[0] != 7 {
		t.Fatalf("the processor loaded history from versions %v, want 7 (after the v6 snapshot)", spy.froms)
	}
}

// loadSpy records the first version of every Load of the "offset" counter.
type loadSpy struct {
	eventstore.Store
	mu    sync.Mutex
	froms []int
}

func (s *loadSpy) Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error) {
	if id.ID == "offset" {
		s.mu.Lock()
		s.froms = append(s.froms, from)
		s.mu.Unlock()
	}
	return s.Store.Load(ctx, id, from, to)
}

func TestRegenerateSnapshot(t *testing.T) {
	snaps := snapshot.NewMemory()
	store := eventstore.NewMemory()
	rt, _ := newRuntime(t, engine.Config{Store: store, SnapshotStore: snaps, SnapshotStrategy: snapshot.VersionOffset(10)}, nil)
	ctx := context.Background()
	id := counters.WithID("regen").WithTenant("acme")
	for range 4 {
		if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 2}), command.Wait(factum.StageSnapshot)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := snaps.Load(ctx, id); !errors.Is(err, factum.ErrNotFound) {
		t.Fatalf("the offset strategy saved early: %v", err)
	}
	got, err := rt.RegenerateSnapshot(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var c Counter
	if err := json.Unmarshal(got.State, &c); err != nil || got.Version != 4 || c.Total != 8 {
		t.Fatalf("regenerated snapshot v%d %s, %v", got.Version, got.State, err)
	}
	if _, err := rt.RegenerateSnapshot(ctx, id.WithTenant("other")); !errors.Is(err, factum.ErrTenantMismatch) {
		t.Fatalf("regenerate in another tenant: %v", err)
	}
	if _, err := rt.RegenerateSnapshot(ctx, counters.WithID("missing")); !errors.Is(err, factum.ErrNotFound) {
		t.Fatalf("regenerate of a missing aggregate: %v", err)
	}
	rt2, _ := newRuntime(t, engine.Config{Store: store}, nil)
	if _, err := rt2.RegenerateSnapshot(ctx, id); !errors.Is(err, factum.ErrIllegalState) {
		t.Fatalf("regenerate without a snapshot store: %v", err)
	}
}

// The snapshots the snapshotter saves from the processor's states (the
// state hints) and from folding streams are the same: after commands on
// many aggregates from parallel callers, each saved snapshot equals the one
// rebuilt from the whole history, but for the time it was taken.
func TestSnapshotsFromProcessorStatesMatchTheFold(t *testing.T) {
	snaps := snapshot.NewMemory()
	rt, _ := newRuntime(t, engine.Config{SnapshotStore: snaps}, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 40 {
				id := counters.WithID(fmt.Sprint("hint-", (w*40+i)%13)).WithTenant("acme")
				if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: i}), command.Wait(factum.StageSnapshot)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for a := range 13 {
		id := counters.WithID(fmt.Sprint("hint-", a)).WithTenant("acme")
		saved, err := snaps.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		rebuilt, err := rt.RegenerateSnapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		saved.SnapshotTime, rebuilt.SnapshotTime = time.Time{}, time.Time{}
		if !reflect.DeepEqual(saved, rebuilt) {
			t.Fatalf("%s:\nsaved   %+v\nrebuilt %+v", id, saved, rebuilt)
		}
	}
}

// A repair sticks: after RegenerateSnapshot, neither the processor's cached
// state (loaded from the damaged snapshot) nor the snapshotter's brings
// the damage back with the next command.
func TestRegenerateSnapshotRepairSticks(t *testing.T) {
	store, snaps := eventstore.NewMemory(), snapshot.NewMemory()
	ctx := context.Background()
	id := counters.WithID("repair")
	send := func(rt *engine.Engine) {
		t.Helper()
		if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), command.Wait(factum.StageSnapshot)); err != nil {
			t.Fatal(err)
		}
	}
	total := func() (int, int) {
		t.Helper()
		s, err := snaps.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var c Counter
		if err := json.Unmarshal(s.State, &c); err != nil {
			t.Fatal(err)
		}
		return s.Version, c.Total
	}
	first, _ := newRuntime(t, engine.Config{Store: store, SnapshotStore: snaps}, nil)
	for range 3 {
		send(first)
	}
	damaged, err := snaps.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	damaged.State = json.RawMessage(`{"Total":1000,"Adds":3}`)
	if _, err := snaps.Save(ctx, damaged); err != nil {
		t.Fatal(err)
	}
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rt, _ := newRuntime(t, engine.Config{Store: store, SnapshotStore: snaps}, nil)
	send(rt) // loads the damaged snapshot
	if v, n := total(); v != 4 || n != 1001 {
		t.Fatalf("before the repair: v%d total %d, want the damage carried to v4 (1001)", v, n)
	}
	if _, err := rt.RegenerateSnapshot(ctx, id); err != nil {
		t.Fatal(err)
	}
	if v, n := total(); v != 4 || n != 4 {
		t.Fatalf("repaired: v%d total %d, want v4 total 4", v, n)
	}
	send(rt)
	if v, n := total(); v != 5 || n != 5 {
		t.Fatalf("after the repair and one more command: v%d total %d, want v5 total 5", v, n)
	}
}

// plainType is an aggregate type with none of aggregate.Definition's fast
// paths: only the methods of aggregate.Type.
type plainType struct{ aggregate.Type }

// A type without the typed fold still gets every snapshot, by Type.Fold.
func TestATypeWithoutTheTypedFoldIsSnapshotted(t *testing.T) {
	snaps := snapshot.NewMemory()
	rt, err := engine.New(engine.Config{Store: eventstore.NewMemory(), SnapshotStore: snaps, SnapshotStrategy: snapshot.VersionOffset(1)},
		plainType{counterType(nil)})
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Run(t, rt)
	ctx := context.Background()
	id := counters.WithID("plain")
	for i := 1; i <= 3; i++ {
		if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: i}), command.Wait(factum.StageSnapshot)); err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
	}
	s, err := snaps.Load(ctx, id)
	if err != nil || s.Version != 3 || !strings.Contains(string(s.State), `"Total":6`) {
		t.Fatalf("snapshot = v%d %s, %v; want v3 with total 6", s.Version, s.State, err)
	}
}
