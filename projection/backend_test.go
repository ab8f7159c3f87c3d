package projection_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/sqlite"
)

// openSQLite opens a SQLite database in the test's directory and the
// shop's projection store over it; the database closes at the test's end.
func openSQLite(t *testing.T) (*sqlite.DB, projection.Store) {
	t.Helper()
	return openSQLiteWith(t, sqlite.Options{Synchronous: "NORMAL"})
}

// openSQLiteWith is openSQLite with the database's options.
func openSQLiteWith(t testing.TB, opts sqlite.Options) (*sqlite.DB, projection.Store) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "factum.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ps, err := sqlite.NewProjectionStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	return db, ps
}

// openPostgres opens a PostgreSQL database in a schema of the test's own
// and the shop's projection store over it; the database closes at the
// test's end. The test skips without FACTUM_POSTGRES_URL.
func openPostgres(t *testing.T) (*postgres.DB, projection.Store) {
	t.Helper()
	return openPostgresWith(t, postgres.Options{MaxConns: 8})
}

// openPostgresWith is openPostgres with the database's options, in which
// it sets the schema.
func openPostgresWith(t testing.TB, opts postgres.Options) (*postgres.DB, projection.Store) {
	t.Helper()
	url, schema := servicetest.PostgresSchema(t)
	opts.Schema = schema
	ctx := context.Background()
	db, err := postgres.Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ps, err := postgres.NewProjectionStore(ctx, db, "shop")
	if err != nil {
		t.Fatal(err)
	}
	return db, ps
}

// componentBackend opens an event store and a projection store over one
// database.
type componentBackend struct {
	name string
	open func(t *testing.T) (eventstore.Store, projection.Store)
}

func componentBackends() []componentBackend {
	return []componentBackend{
		{"sqlite", func(t *testing.T) (eventstore.Store, projection.Store) {
			t.Helper()
			db, ps := openSQLite(t)
			es, err := sqlite.NewEventStore(context.Background(), db, "shop", sqlite.EventStoreOptions{PollInterval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { es.Close() })
			return es, ps
		}},
		{"postgres", func(t *testing.T) (eventstore.Store, projection.Store) {
			t.Helper()
			db, ps := openPostgres(t)
			es, err := postgres.NewEventStore(context.Background(), db, "shop", postgres.EventStoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { es.Close() })
			return es, ps
		}},
	}
}

func forEachComponentBackend(t *testing.T, fn func(t *testing.T, b componentBackend)) {
	for _, b := range componentBackends() {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
	}
}

// storageBackend opens an engine storage and a projection store over one
// database.
type storageBackend struct {
	name string
	open func(t *testing.T) (engine.Storage, projection.Store)
}

func storageBackends() []storageBackend {
	return []storageBackend{
		{"sqlite", func(t *testing.T) (engine.Storage, projection.Store) {
			t.Helper()
			return openSQLite(t)
		}},
		{"postgres", func(t *testing.T) (engine.Storage, projection.Store) {
			t.Helper()
			return openPostgres(t)
		}},
	}
}
