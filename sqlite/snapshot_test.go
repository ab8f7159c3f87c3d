package sqlite_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/sqlite"
)

// openSnapshotDB opens a database in a temporary directory, closed at
// cleanup.
func openSnapshotDB(t testing.TB) *sqlite.DB {
	return sqlstoretest.Closed(sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "snapshots.db"), sqlite.Options{}))(t)
}

func newSnapshotStore(t testing.TB, db *sqlite.DB, boundedContext string) *sqlite.SnapshotStore {
	return sqlstoretest.Must(sqlite.NewSnapshotStore(context.Background(), db, boundedContext))(t)
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

func newCheckpointStore(t testing.TB, db *sqlite.DB, boundedContext string) *sqlite.CheckpointStore {
	return sqlstoretest.Must(sqlite.NewCheckpointStore(context.Background(), db, boundedContext))(t)
}
