package compensation_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/sqlite"
)

// backend opens event stores of one kind.
type backend struct {
	name string
	// open returns a store; instances made by one open function for the
	// same test share their data (one database) when shared is true.
	open func(t testing.TB) eventstore.Store
	// reopen, when set, opens another store over the same data as the
	// stores open returned earlier in the test.
	reopen func(t testing.TB) eventstore.Store
}

func memoryBackend() backend {
	return backend{name: "memory", open: func(testing.TB) eventstore.Store { return eventstore.NewMemory() }}
}

// sqliteBackend opens stores over one database file per test.
func sqliteBackend() backend {
	var mu sync.Mutex
	paths := map[testing.TB]string{}
	open := func(t testing.TB, fresh bool) eventstore.Store {
		t.Helper()
		mu.Lock()
		path, ok := paths[t]
		if !ok || fresh {
			path = filepath.Join(t.TempDir(), "factum.db")
			paths[t] = path
		}
		mu.Unlock()
		ctx := context.Background()
		db, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		st, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{PollInterval: 20 * time.Millisecond})
		return kept(t, st, err, func() { _ = db.Close() })
	}
	return reopenable("sqlite", open)
}

// postgresBackend opens stores over one schema per test.
func postgresBackend() backend {
	var mu sync.Mutex
	schemas := map[testing.TB][2]string{}
	open := func(t testing.TB, fresh bool) eventstore.Store {
		t.Helper()
		mu.Lock()
		s, ok := schemas[t]
		mu.Unlock()
		if !ok || fresh {
			url, schema := servicetest.PostgresSchema(t)
			s = [2]string{url, schema}
			mu.Lock()
			schemas[t] = s
			mu.Unlock()
		}
		ctx := context.Background()
		// Consumers, coalesced appends and the schedulers' concurrent retries
		// share the pool: more than the default 4 connections.
		db, err := postgres.Open(ctx, s[0], postgres.Options{Schema: s[1], MaxConns: 16})
		if err != nil {
			t.Fatal(err)
		}
		st, err := postgres.NewEventStore(ctx, db, "shop", postgres.EventStoreOptions{})
		return kept(t, st, err, db.Close)
	}
	return reopenable("postgres", open)
}

// reopenable is the backend whose open makes a fresh database for the
// test and whose reopen opens the test's last one again.
func reopenable(name string, open func(t testing.TB, fresh bool) eventstore.Store) backend {
	return backend{
		name:   name,
		open:   func(t testing.TB) eventstore.Store { return open(t, true) },
		reopen: func(t testing.TB) eventstore.Store { return open(t, false) },
	}
}

// kept returns the store opened over a database, closing both when the
// test ends, or fails the test (closing the database) when opening
// failed.
func kept[S interface {
	eventstore.Store
	Close() error
}](t testing.TB, st S, err error, closeDB func()) eventstore.Store {
	t.Helper()
	if err != nil {
		closeDB()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = st.Close()
		closeDB()
	})
	return st
}

// forEachBackend runs fn on memory and SQLite.
func forEachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range []backend{memoryBackend(), sqliteBackend()} {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
	}
}
