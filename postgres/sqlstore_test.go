package postgres_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum/engine/storagetest"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/snapshot"
)

// TestSQLStores runs the tests every SQL backend shares (see package
// sqlstoretest) on PostgreSQL schemas.
func TestSQLStores(t *testing.T) {
	sqlstoretest.Run(t, sqlstoretest.Backend{
		Open: func(t testing.TB) sqlstoretest.Stores {
			url, schema := servicetest.PostgresSchema(t)
			return storesIn(t, url, schema)
		},
		Storage: func(t *testing.T) (storagetest.Storage, func()) {
			url, schema := servicetest.PostgresSchema(t)
			db, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			return db, db.Close
		},
		NilDB:       storesOf(nil, nil),
		ErrClosed:   postgres.ErrEventStoreClosed,
		BadPrefixes: []string{"Upper_"}, // unquoted names fold to lower case
	})
}

// storesIn connects to schema of the database at url, closing the pool at
// t's cleanup, and returns the makers of its stores.
func storesIn(t testing.TB, url, schema string) sqlstoretest.Stores {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return storesOf(db, func(t testing.TB) sqlstoretest.Stores { return storesIn(t, url, schema) })
}

// storesOf returns the makers of db's stores; reopen connects to the
// database again.
func storesOf(db *postgres.DB, reopen func(t testing.TB) sqlstoretest.Stores) sqlstoretest.Stores {
	ctx := context.Background()
	return sqlstoretest.Stores{
		Events: func(c string, single bool) (sqlstoretest.EventStore, error) {
			var opts postgres.EventStoreOptions
			if single {
				opts.MaxBatch, opts.Writers = 1, 8
			}
			return postgres.NewEventStore(ctx, db, c, opts)
		},
		Snapshots:   func(c string) (snapshot.QueryStore, error) { return postgres.NewSnapshotStore(ctx, db, c) },
		Checkpoints: func(c string) (sqlstoretest.CheckpointStore, error) { return postgres.NewCheckpointStore(ctx, db, c) },
		Projections: func(c string) (projection.Store, error) { return postgres.NewProjectionStore(ctx, db, c) },
		Idempotency: func(prefix string, p idempotency.Policy) (idempotency.Store, error) {
			return postgres.NewIdempotencyStore(ctx, db, postgres.IdempotencyOptions{Prefix: prefix, Policy: p})
		},
		Exec: func(ctx context.Context, q string) error {
			_, err := db.Pool().Exec(ctx, q)
			return err
		},
		Reopen: reopen,
	}
}
