package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparetest"
	"github.com/factum-go/factum/sqlite"
)

func openDB(t testing.TB, path string) *sqlite.DB {
	return sqlstoretest.Closed(sqlite.Open(context.Background(), path, sqlite.Options{}))(t)
}

func newPrepareBackend(t testing.TB, db *sqlite.DB, opts sqlite.PrepareOptions) *sqlite.PrepareBackend {
	return sqlstoretest.Must(sqlite.NewPrepareBackend(context.Background(), db, opts))(t)
}

func TestPrepareContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prepare.db")
	db, peerDB, holder := openDB(t, path), openDB(t, path), openDB(t, path)
	preparetest.Run(t, func(t *testing.T) preparetest.Target {
		clock := preparetest.NewClock(time.Now())
		// A backend per case, for the case's clock, over one database, and
		// a second instance on a handle of its own, as another process
		// would have.
		return preparetest.Target{
			Backend: newPrepareBackend(t, db, sqlite.PrepareOptions{Now: clock.Now}),
			Peer:    newPrepareBackend(t, peerDB, sqlite.PrepareOptions{Now: clock.Now}),
			Clock:   clock,
			Hold:    func(t *testing.T, _, _ string) func() { return holdWriteLock(t, holder) },
		}
	})
}

// Processes sharing the file are serialised by SQLite's write lock: four
// independent handles (as four processes would have) racing on one key.
func TestPrepareAcrossHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prepare.db")
	var keys []*prepare.Key[int]
	for range 4 {
		k, err := prepare.NewKey[int]("sku", newPrepareBackend(t, openDB(t, path), sqlite.PrepareOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	ctx := context.Background()
	for round := range 5 {
		key := fmt.Sprint("sku-", round)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Go(func() {
				ok, err := keys[i%len(keys)].Prepare(ctx, key, prepare.Forever(i))
				if err != nil {
					t.Error(err)
				}
				if ok {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if n := wins.Load(); n != 1 {
			t.Fatalf("round %d: %d handles prepared the key, want 1", round, n)
		}
	}
}

// Every PurgeEvery-th Prepare deletes lapsed rows of any name.
func TestPrepareLazyPurge(t *testing.T) {
	ctx := context.Background()
	clock := preparetest.NewClock(time.Now())
	db := openDB(t, filepath.Join(t.TempDir(), "prepare.db"))
	b := newPrepareBackend(t, db, sqlite.PrepareOptions{Now: clock.Now, PurgeEvery: 3})
	k, err := prepare.NewKey[string]("promo", b)
	if err != nil {
		t.Fatal(err)
	}
	other, err := prepare.NewKey[string]("sku", b)
	if err != nil {
		t.Fatal(err)
	}
	mustPrepare := func(k *prepare.Key[string], key string, pv prepare.PreparedValue[string]) {
		t.Helper()
		if ok, err := k.Prepare(ctx, key, pv); !ok || err != nil {
			t.Fatalf("Prepare(%q) = %v, %v", key, ok, err)
		}
	}
	mustPrepare(k, "lapsing", prepare.ExpiresAt("v", clock.Now().Add(time.Second))) // 1st
	mustPrepare(k, "kept", prepare.Forever("v"))                                    // 2nd
	clock.Advance(2 * time.Second)
	count := func() (n int) {
		t.Helper()
		if err := db.Reader().QueryRow(`SELECT count(*) FROM factum_prepare`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 2 {
		t.Fatalf("%d rows before the purge, want 2", n)
	}
	mustPrepare(other, "x", prepare.Forever("v")) // 3rd: purges first
	if _, ok, err := k.GetValue(ctx, "lapsing"); ok || err != nil {
		t.Fatalf("lapsed row survived the lazy purge (%v, %v)", ok, err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d rows after the purge, want 2 (kept, x)", n)
	}
}

func TestPrepareMigratesOnce(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "prepare.db"))
	newPrepareBackend(t, db, sqlite.PrepareOptions{})
	newPrepareBackend(t, db, sqlite.PrepareOptions{})
	var n int
	if err := db.Reader().QueryRow(`SELECT count(*) FROM factum_migrations WHERE component = 'prepare'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d prepare migrations recorded (%v), want 1", n, err)
	}
	if _, err := sqlite.NewPrepareBackend(context.Background(), nil, sqlite.PrepareOptions{}); err == nil {
		t.Fatal("nil DB accepted")
	}
}
