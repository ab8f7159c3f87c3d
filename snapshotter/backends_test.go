package snapshotter_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/memory"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/sqlite"
)

// backend opens storages of one kind; reopen opens the same data again,
// as a restarted process does.
type backend struct {
	name string
	// open returns a fresh storage, and a function that opens another
	// handle over the same data.
	open func(t *testing.T) (st engine.Storage, reopen func() engine.Storage)
}

func backends() []backend {
	return []backend{
		{"memory", func(t *testing.T) (engine.Storage, func() engine.Storage) {
			st := memory.New()
			t.Cleanup(func() { st.Close() })
			return st, func() engine.Storage { return st }
		}},
		{"sqlite", func(t *testing.T) (engine.Storage, func() engine.Storage) {
			path := filepath.Join(t.TempDir(), "factum.db")
			open := func() engine.Storage {
				db, err := sqlite.Open(context.Background(), path, sqlite.Options{Synchronous: "NORMAL"})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			}
			return open(), open
		}},
		{"postgres", func(t *testing.T) (engine.Storage, func() engine.Storage) {
			url, schema := servicetest.PostgresSchema(t)
			open := func() engine.Storage {
				db, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema, MaxConns: 8})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			}
			return open(), open
		}},
	}
}

// forEachBackend runs fn on every backend, PostgreSQL when
// FACTUM_POSTGRES_URL is set.
func forEachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
	}
}
