package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencytest"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
	"github.com/factum-go/factum/sqlite"
)

func openIdempotencyDB(t testing.TB, opts sqlite.Options) *sqlite.DB {
	return sqlstoretest.Closed(sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "idem.db"), opts))(t)
}

func TestIdempotencyContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idem.db")
	ctx := context.Background()
	// Every store the kit asks for is a new instance with a database
	// handle of its own on the one file, as a second process would have.
	build := func(t *testing.T, p idempotency.Policy, clock func() time.Time) idempotency.Store {
		db, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		s, err := sqlite.NewIdempotencyStore(ctx, db, sqlite.IdempotencyOptions{Policy: p, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	holder, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close() })
	idempotencytest.RunHarness(t, idempotencytest.Harness{
		New:        func(t *testing.T, p idempotency.Policy) idempotency.Store { return build(t, p, nil) },
		NewClocked: build,
		Hold:       func(t *testing.T, _ idempotency.Key) func() { return holdWriteLock(t, holder) },
	})
}

// holdWriteLock takes the database's write lock from db, a handle other
// than the stores', and returns the function that lets it go. Writers of
// other handles wait for it (up to their busy timeout), as writers of
// another process would.
func holdWriteLock(t *testing.T, db *sqlite.DB) func() {
	tx, err := db.Writer().BeginTx(context.Background(), nil) // BEGIN IMMEDIATE
	if err != nil {
		t.Errorf("hold the write lock: %v", err)
		return func() {}
	}
	return func() {
		if err := tx.Rollback(); err != nil {
			t.Errorf("release the write lock: %v", err)
		}
	}
}

// TestIdempotencyPurge: expired rows are deleted by Purge, in batches,
// live ones stay, and a purged key still gets a higher attempt next time.
func TestIdempotencyPurge(t *testing.T) {
	db := openIdempotencyDB(t, sqlite.Options{Synchronous: "NORMAL"})
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return now }
	ctx := context.Background()
	s, err := sqlite.NewIdempotencyStore(ctx, db, sqlite.IdempotencyOptions{
		Policy: idempotency.Policy{Lease: time.Minute, Retention: time.Hour},
		Clock:  func() time.Time { return clock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) idempotency.Key {
		return idempotency.Key{Tenant: "t", Operation: "op", Value: time.Duration(i).String()}
	}
	const n = 1200 // more than one purge batch
	var first idempotency.Record
	for i := range n {
		rec, _, err := s.Begin(ctx, key(i), "fp")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = rec
		}
	}
	if err := s.Complete(ctx, key(0), "fp", first.Attempt, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Purge(ctx); err != nil || got != 0 {
		t.Fatalf("Purge before any expiry = %d, %v", got, err)
	}
	now = now.Add(time.Minute) // every lease but key 0's retention ends
	got, err := s.Purge(ctx)
	if err != nil || got != n-1 {
		t.Fatalf("Purge = %d, %v; want %d", got, err, n-1)
	}
	var rows int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM factum_idempotency_keys`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d rows left (%v), want 1", rows, err)
	}
	if rec, found, err := s.Get(ctx, key(0)); err != nil || !found || string(rec.Response) != "kept" {
		t.Fatalf("live record after purge = %+v, %v, %v", rec, found, err)
	}
	rec, created, err := s.Begin(ctx, key(1), "fp")
	if err != nil || !created || rec.Attempt <= n {
		t.Fatalf("Begin of a purged key = %+v, %v, %v; want an attempt above %d", rec, created, err, n)
	}
}

// TestIdempotencyPrefixKeepsItsCase: SQLite's table names ignore case, so
// a prefix with upper-case letters is a plain identifier part here (unlike
// PostgreSQL, which folds unquoted names), and its store keeps its keys.
func TestIdempotencyPrefixKeepsItsCase(t *testing.T) {
	db := openIdempotencyDB(t, sqlite.Options{})
	ctx := context.Background()
	for _, prefix := range []string{"Upper_", "mixedCase_"} {
		s, err := sqlite.NewIdempotencyStore(ctx, db, sqlite.IdempotencyOptions{Prefix: prefix})
		if err != nil {
			t.Fatalf("prefix %q: %v, want a store", prefix, err)
		}
		k := idempotency.Key{Tenant: "t", Operation: "op", Value: prefix}
		if _, created, err := s.Begin(ctx, k, "fp"); err != nil || !created {
			t.Fatalf("prefix %q: Begin = %v, %v; want a new claim", prefix, created, err)
		}
		if rec, found, err := s.Get(ctx, k); err != nil || !found || rec.Fingerprint != "fp" {
			t.Fatalf("prefix %q: Get = %+v, %v, %v", prefix, rec, found, err)
		}
	}
}
