package sqlite_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/event/checkpointtest"
	"github.com/factum-go/factum/sqlite"
)

func newCheckpointStore(t testing.TB, db *sqlite.DB, boundedContext string) *sqlite.CheckpointStore {
	t.Helper()
	st, err := sqlite.NewCheckpointStore(context.Background(), db, boundedContext)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCheckpointStoreContract(t *testing.T) {
	db := openSnapshotDB(t)
	checkpointtest.Run(t, func(*testing.T) event.CheckpointStore { return newCheckpointStore(t, db, "shop") })
}

// TestCheckpointStorePersists reads checkpoints back through a new store on
// a reopened database file, and keeps two contexts sharing the file apart.
func TestCheckpointStorePersists(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/checkpoints.db"
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	group := factum.Function{Context: "shop", Processor: "snapshotter"}
	shop := newCheckpointStore(t, db, "shop")
	billing := newCheckpointStore(t, db, "billing")
	if err := shop.SaveCheckpoint(ctx, group, factum.Position{Seq: 42}); err != nil {
		t.Fatal(err)
	}
	if err := billing.SaveCheckpoint(ctx, group, factum.Position{Seq: 7}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for c, want := range map[string]uint64{"shop": 42, "billing": 7} {
		if got, err := newCheckpointStore(t, db, c).Checkpoint(ctx, group); err != nil || got != (factum.Position{Seq: want}) {
			t.Errorf("%s after reopening: %v, %v; want 0:%d", c, got, err, want)
		}
	}
}
