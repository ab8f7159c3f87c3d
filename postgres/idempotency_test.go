package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencytest"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
)

// newIdempotencyStore opens a store with a minute's lease and an hour's
// retention in a fresh schema, dropped at cleanup.
func newIdempotencyStore(t *testing.T) (*postgres.DB, *postgres.IdempotencyStore) {
	t.Helper()
	db := openSnapshotDB(t)
	s, err := postgres.NewIdempotencyStore(context.Background(), db, postgres.IdempotencyOptions{
		Policy: idempotency.Policy{Lease: time.Minute, Retention: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, s
}

func TestIdempotencyContract(t *testing.T) {
	url, schema := servicetest.PostgresSchema(t)
	ctx := context.Background()
	// Every store the kit asks for is a new instance with a pool of its
	// own, as a second process would have.
	open := func(t *testing.T) *postgres.DB {
		db, err := postgres.Open(ctx, url, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db
	}
	holder := open(t)
	idempotencytest.RunHarness(t, idempotencytest.Harness{
		New: func(t *testing.T, p idempotency.Policy) idempotency.Store {
			s, err := postgres.NewIdempotencyStore(ctx, open(t), postgres.IdempotencyOptions{Policy: p})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		// The row lock every claim and owner write of the key waits for.
		Hold: func(t *testing.T, k idempotency.Key) func() {
			return holdRow(t, holder, `SELECT 1 FROM factum_idempotency_keys WHERE tenant = $1 AND operation = $2 AND key = $3 FOR UPDATE`,
				k.Tenant, k.Operation, k.Value)
		},
	})
}

// holdRow locks the row query selects in a transaction of its own and
// returns the function that rolls it back.
func holdRow(t *testing.T, db *postgres.DB, query string, args ...any) func() {
	ctx := context.Background()
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Errorf("hold: %v", err)
		return func() {}
	}
	if tag, err := tx.Exec(ctx, query, args...); err != nil || tag.RowsAffected() != 1 {
		t.Errorf("hold: locked %d rows: %v", tag.RowsAffected(), err)
	}
	return func() {
		if err := tx.Rollback(ctx); err != nil {
			t.Errorf("hold: release: %v", err)
		}
	}
}

// TestIdempotencyPurge: expired rows are deleted by Purge, in batches,
// live ones stay, and a purged key still gets a higher attempt next time.
func TestIdempotencyPurge(t *testing.T) {
	db, s := newIdempotencyStore(t)
	ctx := context.Background()
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

// TestIdempotencyAttemptDrawnAtClaim: a Begin that waits on the row lock
// while another owner is granted the key (driven here with raw SQL, which
// takes an attempt from the sequence and releases the key) gets an attempt
// higher than that owner's when it takes the key over afterwards: the
// attempt is drawn when the row is claimed, not when the statement starts.
func TestIdempotencyAttemptDrawnAtClaim(t *testing.T) {
	db, s := newIdempotencyStore(t)
	ctx := context.Background()
	k := idempotency.Key{Tenant: "t", Operation: "op", Value: "drawn-at-claim"}
	first, _, err := s.Begin(ctx, k, "fp")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(ctx, k, "fp", first.Attempt, true); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM factum_idempotency_keys WHERE key = $1 FOR UPDATE`, k.Value); err != nil {
		t.Fatal(err)
	}
	type begun struct {
		rec     idempotency.Record
		created bool
		err     error
	}
	ch := make(chan begun, 1)
	go func() {
		rec, created, err := s.Begin(ctx, k, "fp")
		ch <- begun{rec, created, err}
	}()
	time.Sleep(200 * time.Millisecond) // the Begin starts and waits on the row lock
	// Another owner is granted the key and releases it, inside the lock.
	var other int64
	if err := tx.QueryRow(ctx, `UPDATE factum_idempotency_keys SET state = 'retryable',
		attempt = nextval('factum_idempotency_attempts') WHERE key = $1 RETURNING attempt`, k.Value).Scan(&other); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	b := <-ch
	if b.err != nil || !b.created {
		t.Fatalf("the waiting Begin = %+v, created %v, %v; want it to take the released key over", b.rec, b.created, b.err)
	}
	if b.rec.Attempt <= uint64(other) {
		t.Fatalf("owners got attempts %d, %d, then %d; each must be higher than the one before", first.Attempt, other, b.rec.Attempt)
	}
}
