package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparetest"
)

// openPrepare returns a backend in a fresh schema dropped when the test
// ends.
func openPrepare(t testing.TB, opts postgres.Options, popts postgres.PrepareOptions) (*postgres.PrepareBackend, *postgres.DB) {
	t.Helper()
	url, schema := servicetest.PostgresSchema(t)
	opts.Schema = schema
	db, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	b, err := postgres.NewPrepareBackend(context.Background(), db, popts)
	if err != nil {
		t.Fatal(err)
	}
	return b, db
}

func TestPrepareContract(t *testing.T) {
	url, schema := servicetest.PostgresSchema(t)
	ctx := context.Background()
	// Two instances, each with a pool of its own, as two processes would
	// have.
	var backends []*postgres.PrepareBackend
	var peerDB *postgres.DB
	for range 2 {
		db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		b, err := postgres.NewPrepareBackend(ctx, db, postgres.PrepareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		backends, peerDB = append(backends, b), db
	}
	b, peer := backends[0], backends[1]
	preparetest.Run(t, func(t *testing.T) preparetest.Target {
		// The database's clock judges expiry: the kit sleeps past expiries.
		return preparetest.Target{Backend: b, Peer: peer, Hold: func(t *testing.T, name, key string) func() {
			// The row lock every write of the key waits for.
			return holdRow(t, peerDB, `SELECT 1 FROM factum_prepare WHERE name = $1 AND key = $2 FOR UPDATE`, name, key)
		}}
	})
}

// Every PurgeEvery-th Prepare deletes lapsed rows of any name.
func TestPrepareLazyPurge(t *testing.T) {
	ctx := context.Background()
	b, db := openPrepare(t, postgres.Options{}, postgres.PrepareOptions{PurgeEvery: 3})
	k, err := prepare.NewKey[string]("promo", b)
	if err != nil {
		t.Fatal(err)
	}
	mustPrepare := func(key string, pv prepare.PreparedValue[string]) {
		t.Helper()
		if ok, err := k.Prepare(ctx, key, pv); !ok || err != nil {
			t.Fatalf("Prepare(%q) = %v, %v", key, ok, err)
		}
	}
	lapsing := prepare.ExpiresIn("v", 100*time.Millisecond)
	mustPrepare("lapsing", lapsing) // 1st
	mustPrepare("kept", prepare.Forever("v"))
	time.Sleep(time.Until(time.UnixMilli(lapsing.ExpiresAt).Add(50 * time.Millisecond)))
	if _, ok, err := k.GetValue(ctx, "lapsing"); !ok || err != nil {
		t.Fatalf("lapsed row gone before the purge (%v, %v)", ok, err)
	}
	mustPrepare("x", prepare.Forever("v")) // 3rd: purges first
	if _, ok, err := k.GetValue(ctx, "lapsing"); ok || err != nil {
		t.Fatalf("lapsed row survived the lazy purge (%v, %v)", ok, err)
	}
	var n int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM factum_prepare`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d rows after the purge (%v), want 2 (kept, x)", n, err)
	}
}

func TestPrepareMigratesOnce(t *testing.T) {
	_, db := openPrepare(t, postgres.Options{}, postgres.PrepareOptions{})
	if _, err := postgres.NewPrepareBackend(context.Background(), db, postgres.PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM factum_migrations WHERE component = 'prepare'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d prepare migrations recorded (%v), want 2 (each file once)", n, err)
	}
	if _, err := postgres.NewPrepareBackend(context.Background(), nil, postgres.PrepareOptions{}); err == nil {
		t.Fatal("nil DB accepted")
	}
}
