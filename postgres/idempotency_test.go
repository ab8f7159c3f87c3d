package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencytest"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
)

// openIdempotencyDB opens the test server in a fresh schema dropped when
// the test ends.
func openIdempotencyDB(t testing.TB) *postgres.DB {
	t.Helper()
	url, schema := servicetest.PostgresSchema(t)
	db, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func TestIdempotencyContract(t *testing.T) {
	db := openIdempotencyDB(t)
	idempotencytest.Run(t, func(t *testing.T, p idempotency.Policy) idempotency.Store {
		s, err := postgres.NewIdempotencyStore(context.Background(), db, postgres.IdempotencyOptions{Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestIdempotencyPurge: expired rows are deleted by Purge, in batches,
// live ones stay, and a purged key still gets a higher attempt next time.
func TestIdempotencyPurge(t *testing.T) {
	db := openIdempotencyDB(t)
	ctx := context.Background()
	s, err := postgres.NewIdempotencyStore(ctx, db, postgres.IdempotencyOptions{
		Policy: idempotency.Policy{Lease: time.Minute, Retention: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) idempotency.Key {
		return idempotency.Key{Tenant: "t", Operation: "op", Value: time.Duration(i).String()}
	}
	const n = 1200 // more than one purge batch
	// Rows claimed a minute and more ago: the database's clock judges
	// expiry, so the test writes them as if an earlier Begin had.
	if _, err := db.Pool().Exec(ctx, `INSERT INTO factum_idempotency_keys (tenant, operation, key, state, fingerprint, expires_at)
		SELECT 't', 'op', 'old-' || i, 'in_progress', 'fp', now() - interval '1 second' FROM generate_series(1, $1) AS i`, n); err != nil {
		t.Fatal(err)
	}
	live, _, err := s.Begin(ctx, key(0), "fp")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Purge(ctx)
	if err != nil || got != n {
		t.Fatalf("Purge = %d, %v; want %d", got, err, n)
	}
	var rows int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM factum_idempotency_keys`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d rows left (%v), want 1", rows, err)
	}
	if rec, found, err := s.Get(ctx, key(0)); err != nil || !found || rec.Attempt != live.Attempt {
		t.Fatalf("live record after purge = %+v, %v, %v", rec, found, err)
	}
	rec, created, err := s.Begin(ctx, idempotency.Key{Tenant: "t", Operation: "op", Value: "old-1"}, "fp")
	if err != nil || !created || rec.Attempt <= live.Attempt {
		t.Fatalf("Begin of a purged key = %+v, %v, %v; want an attempt above %d", rec, created, err, live.Attempt)
	}
}

// TestIdempotencyOptions: bad options are refused before anything is
// created, and stores with different prefixes keep to their own tables.
func TestIdempotencyOptions(t *testing.T) {
	db := openIdempotencyDB(t)
	ctx := context.Background()
	for _, opts := range []postgres.IdempotencyOptions{
		{Prefix: "bad prefix"},
		{Prefix: "x;DROP TABLE y"},
		{Prefix: "Upper_"},
		{Prefix: "1abc"},
		{Policy: idempotency.Policy{Retention: -time.Second}},
	} {
		if _, err := postgres.NewIdempotencyStore(ctx, db, opts); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("options %+v: %v, want IllegalArgument", opts, err)
		}
	}
	a, err := postgres.NewIdempotencyStore(ctx, db, postgres.IdempotencyOptions{Prefix: "a_"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := postgres.NewIdempotencyStore(ctx, db, postgres.IdempotencyOptions{Prefix: "b_"})
	if err != nil {
		t.Fatal(err)
	}
	k := idempotency.Key{Tenant: "t", Operation: "op", Value: "v"}
	if _, created, err := a.Begin(ctx, k, "fp"); err != nil || !created {
		t.Fatal(created, err)
	}
	if _, created, err := b.Begin(ctx, k, "other"); err != nil || !created {
		t.Fatalf("store b saw store a's key: %v, %v", created, err)
	}
	if _, err := postgres.NewIdempotencyStore(ctx, db, postgres.IdempotencyOptions{Prefix: "a_"}); err != nil {
		t.Fatal(err)
	}
}
