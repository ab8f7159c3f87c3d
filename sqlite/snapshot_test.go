package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshot/snapshottest"
	"github.com/factum-go/factum/sqlite"
)

// openSnapshotDB opens a database in a temporary directory, closed at
// cleanup.
func openSnapshotDB(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "snapshots.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newSnapshotStore(t testing.TB, db *sqlite.DB, boundedContext string) *sqlite.SnapshotStore {
	t.Helper()
	st, err := sqlite.NewSnapshotStore(context.Background(), db, boundedContext)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSnapshotStoreContract(t *testing.T) {
	st := newSnapshotStore(t, openSnapshotDB(t), "kit")
	snapshottest.Run(t, func(*testing.T) snapshot.Store { return st })
}

// TestSnapshotStoreContextNames serves contexts whose table names need
// quoting, and keeps two contexts sharing the file apart.
func TestSnapshotStoreContextNames(t *testing.T) {
	db := openSnapshotDB(t)
	ctx := context.Background()
	for _, c := range []string{"my-shop.v2", "Billing"} {
		st := newSnapshotStore(t, db, c)
		named := factum.NamedAggregate{Context: c, Aggregate: "order"}
		if _, err := st.Save(ctx, snapshot.Snapshot{AggregateID: named.WithID("o-1"), Version: 1, State: json.RawMessage(`{"context":"` + c + `"}`)}); err != nil {
			t.Fatalf("%s: save: %v", c, err)
		}
		svc, err := snapshot.NewQueryService(st, named, query.Planner{})
		if err != nil {
			t.Fatal(err)
		}
		list, err := svc.List(ctx, query.Query{Condition: query.Eq("state.context", c)})
		if err != nil || len(list) != 1 {
			t.Fatalf("%s: list = %v, %v", c, list, err)
		}
		if n, err := svc.Count(ctx, query.All()); err != nil || n != 1 {
			t.Fatalf("%s: count = %d, %v", c, n, err)
		}
		other := factum.NamedAggregate{Context: "elsewhere", Aggregate: "order"}
		if _, err := st.Save(ctx, snapshot.Snapshot{AggregateID: other.WithID("o-1"), Version: 1, State: json.RawMessage(`{}`)}); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: save of another context: %v, want IllegalArgument", c, err)
		}
		if _, err := st.Load(ctx, other.WithID("o-1")); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: load of another context: %v, want IllegalArgument", c, err)
		}
		if _, err := st.Count(ctx, other, query.All()); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: count of another context: %v, want IllegalArgument", c, err)
		}
	}
}

// TestSnapshotAndCheckpointStoresClose: Close releases the prepared
// statements and leaves the DB open; a store used after Close still saves
// (preparing each time).
func TestSnapshotAndCheckpointStoresClose(t *testing.T) {
	ctx := context.Background()
	db := openSnapshotDB(t)
	st := newSnapshotStore(t, db, "shop")
	cps := newCheckpointStore(t, db, "shop")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cps.Close(); err != nil {
		t.Fatal(err)
	}
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1")
	group := factum.Function{Context: "shop", Processor: "p"}
	for v := 1; v <= 2; v++ {
		if saved, err := st.Save(ctx, snapshot.Snapshot{AggregateID: id, Version: v, State: json.RawMessage(`{}`)}); err != nil || !saved {
			t.Fatalf("save v%d after Close: %v, %v", v, saved, err)
		}
		if err := cps.SaveCheckpoint(ctx, group, factum.Position{Seq: uint64(v)}); err != nil {
			t.Fatalf("checkpoint save after Close: %v", err)
		}
	}
	if saved, err := st.Save(ctx, snapshot.Snapshot{AggregateID: id, Version: 1, State: json.RawMessage(`{}`)}); err != nil || saved {
		t.Errorf("stale save after Close: %v, %v", saved, err)
	}
	if got, err := st.Load(ctx, id); err != nil || got.Version != 2 {
		t.Errorf("load: v%d, %v", got.Version, err)
	}
	if pos, err := cps.Checkpoint(ctx, group); err != nil || pos.Seq != 2 {
		t.Errorf("checkpoint: %s, %v", pos, err)
	}
}
