package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum/engine/storagetest"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/sqlite"
)

// TestSQLStores runs the tests every SQL backend shares (see package
// sqlstoretest) on SQLite files.
func TestSQLStores(t *testing.T) {
	sqlstoretest.Run(t, sqlstoretest.Backend{
		Open: func(t testing.TB) sqlstoretest.Stores {
			return storesAt(t, filepath.Join(t.TempDir(), "factum.db"), "NORMAL")
		},
		Storage: func(t *testing.T) (storagetest.Storage, func()) {
			db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "factum.db"))
			if err != nil {
				t.Fatal(err)
			}
			return db, func() { _ = db.Close() }
		},
		NilDB:     storesOf(nil, nil),
		ErrClosed: sqlite.ErrEventStoreClosed,
		FoldsCase: true,
	})
}

// storesAt opens the database file at path with the synchronous pragma
// sync, closed at t's cleanup, and returns the makers of its stores.
func storesAt(t testing.TB, path, sync string) sqlstoretest.Stores {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: sync})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return storesOf(db, func(t testing.TB) sqlstoretest.Stores { return storesAt(t, path, sync) })
}

// storesOf returns the makers of db's stores; reopen opens the database
// again.
func storesOf(db *sqlite.DB, reopen func(t testing.TB) sqlstoretest.Stores) sqlstoretest.Stores {
	ctx := context.Background()
	return sqlstoretest.Stores{
		Events: func(c string, single bool) (sqlstoretest.EventStore, error) {
			var opts sqlite.EventStoreOptions
			if single {
				opts.MaxBatch = 1
			}
			return sqlite.NewEventStore(ctx, db, c, opts)
		},
		Snapshots:   func(c string) (snapshot.QueryStore, error) { return sqlite.NewSnapshotStore(ctx, db, c) },
		Checkpoints: func(c string) (sqlstoretest.CheckpointStore, error) { return sqlite.NewCheckpointStore(ctx, db, c) },
		Projections: func(c string) (projection.Store, error) { return sqlite.NewProjectionStore(ctx, db, c) },
		Idempotency: func(prefix string, p idempotency.Policy) (idempotency.Store, error) {
			return sqlite.NewIdempotencyStore(ctx, db, sqlite.IdempotencyOptions{Prefix: prefix, Policy: p})
		},
		Exec: func(ctx context.Context, q string) error {
			_, err := db.Writer().ExecContext(ctx, q)
			return err
		},
		Reopen: reopen,
	}
}
