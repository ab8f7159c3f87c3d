package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/event/checkpointtest"
	"github.com/factum-go/factum/postgres"
)

func newCheckpointStore(t testing.TB, db *postgres.DB, boundedContext string) *postgres.CheckpointStore {
	t.Helper()
	st, err := postgres.NewCheckpointStore(context.Background(), db, boundedContext)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCheckpointStoreContract(t *testing.T) {
	db := openSnapshotDB(t)
	checkpointtest.Run(t, func(*testing.T) event.CheckpointStore { return newCheckpointStore(t, db, "shop") })
}

// TestCheckpointStorePersists reads checkpoints back through a new pool on
// the same schema, and keeps two contexts sharing the schema apart.
func TestCheckpointStorePersists(t *testing.T) {
	ctx := context.Background()
	db := openSnapshotDB(t)
	group := factum.Function{Context: "shop", Processor: "snapshotter"}
	if err := newCheckpointStore(t, db, "shop").SaveCheckpoint(ctx, group, factum.Position{Tx: 900, Seq: 42}); err != nil {
		t.Fatal(err)
	}
	if err := newCheckpointStore(t, db, "Shop").SaveCheckpoint(ctx, group, factum.Position{Tx: 800, Seq: 7}); err != nil {
		t.Fatal(err)
	}
	again, err := postgres.Open(ctx, db.Pool().Config().ConnString(), postgres.Options{Schema: db.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for c, want := range map[string]factum.Position{"shop": {Tx: 900, Seq: 42}, "Shop": {Tx: 800, Seq: 7}} {
		if got, err := newCheckpointStore(t, again, c).Checkpoint(ctx, group); err != nil || got != want {
			t.Errorf("%s through a new pool: %v, %v; want %s", c, got, err, want)
		}
	}
}

func TestCheckpointStoreRefusesLongContext(t *testing.T) {
	db := openSnapshotDB(t)
	long := "c" + strings.Repeat("x", 44)
	if _, err := postgres.NewCheckpointStore(context.Background(), db, long); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("context of %d bytes: %v, want IllegalArgument", len(long), err)
	}
	if _, err := postgres.NewSnapshotStore(context.Background(), db, long); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("snapshot store, context of %d bytes: %v, want IllegalArgument", len(long), err)
	}
	newCheckpointStore(t, db, long[:44])
	newSnapshotStore(t, db, long[:44])
}
