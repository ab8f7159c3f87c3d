package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/sqlite"
)

// TestRuntimeOnSQLite runs the shared end-to-end checks (see package
// runtimetest) with every store in one SQLite file, restarting on it.
func TestRuntimeOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	enginetest.CartService(t, func(t *testing.T) enginetest.Stores {
		t.Helper()
		ctx := context.Background()
		db, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		events, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		snapshots, err := sqlite.NewSnapshotStore(ctx, db, "shop")
		if err != nil {
			t.Fatal(err)
		}
		checkpoints, err := sqlite.NewCheckpointStore(ctx, db, "shop")
		if err != nil {
			t.Fatal(err)
		}
		return enginetest.Stores{Events: events, Snapshots: snapshots, Checkpoints: checkpoints, Close: func() error {
			if err := events.Close(); err != nil {
				return err
			}
			return db.Close()
		}}
	})
}
