package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

// DefaultIdempotencyPrefix starts the names of the idempotency tables
// unless IdempotencyOptions.Prefix says otherwise.
const DefaultIdempotencyPrefix = "factum_"

// IdempotencyOptions configures NewIdempotencyStore.
type IdempotencyOptions struct {
	// Policy sets the lease and the retention; the zero value is the
	// default policy.
	Policy idempotency.Policy
	// Prefix starts the table and sequence names (default
	// DefaultIdempotencyPrefix): lower-case letters, digits and '_'.
	Prefix string
}

// IdempotencyStore is an idempotency.Store on PostgreSQL.
//
// Records live in one table whose primary key is (tenant, operation, key).
// Expiry is judged by the database's clock, so application servers with
// skewed clocks agree, read with clock_timestamp() at the moment a row is
// written, once the statement holds the row's lock (never now(), the
// statement's start, which a lock wait leaves behind). Begin claims the
// key with one autocommitted INSERT … ON CONFLICT DO UPDATE that takes over
// only an expired or released row and draws the attempt from a sequence
// in the same locked step, so every new owner of a key holds a higher
// attempt than any owner granted before it; the claim is committed before
// Begin returns, so a concurrent duplicate is answered at once instead of
// waiting on an open transaction. When the claim does not apply, the live
// row is read to answer (and if it expired in between, the claim is tried
// again). Complete, Fail and Renew are each one statement that locks the
// row, reads the clock, and updates the row only for the owning attempt
// of a live, in-progress record with the same fingerprint; the row and the
// clock reading it judged come back with the outcome, so a refusal names
// the reason the write saw. A read that finds an expired row reads it
// again under a row lock before it reports the key free, after any write
// in flight: once anyone has been told a lease lapsed, its old owner can
// no longer complete, fail or renew the key. Expired rows are invisible,
// are overwritten by the next Begin of their key, and are deleted by
// Purge.
type IdempotencyStore struct {
	*idempotency.Front // over the backend: owners, begin and get
	owners             sqlstore.Owners
	db                 *DB
	policy             idempotency.Policy
	q                  pgIdempotencyQueries
}

type pgIdempotencyQueries struct {
	claim, read, readLocked, finish, lock, purge string
}

// NewIdempotencyStore applies the idempotency migrations to db (component
// "idempotency", or "idempotency:<prefix>" for a non-default prefix) and
// returns the store. It fails with an IllegalArgument error for an invalid
// policy or prefix.
func NewIdempotencyStore(ctx context.Context, db *DB, opts IdempotencyOptions) (*IdempotencyStore, error) {
	p, t, seq, err := sqlstore.SetupIdempotency(ctx, &dialect, db.migrator(), migrations, opts.Policy, opts.Prefix, DefaultIdempotencyPrefix)
	if err != nil {
		return nil, err
	}
	const cols = `state, fingerprint, response, expires_at, attempt, expires_at > clock_timestamp()`
	const pk = ` tenant = $1 AND operation = $2 AND key = $3`
	s := &IdempotencyStore{db: db, policy: p, q: pgIdempotencyQueries{
		// Takes the key when it is absent, expired, or released by the
		// same fingerprint; otherwise changes nothing and returns no row.
		// ON CONFLICT locks the row before it evaluates the WHERE and the
		// SET, so expiry is judged, and the attempt drawn from the
		// sequence, at the moment the row is claimed, however long the
		// statement waited for the lock: owners get attempts in the order
		// they are granted the key. (The VALUES are computed when the
		// statement starts; they are used only when the key has no row,
		// and Purge, the only delete, waits for every claim in flight.)
		claim: `INSERT INTO ` + t + ` AS cur (tenant, operation, key, state, fingerprint, response, expires_at, attempt)
			VALUES ($1, $2, $3, 'in_progress', $4, NULL, clock_timestamp() + $5 * interval '1 microsecond', nextval('` + seq + `'))
			ON CONFLICT (tenant, operation, key) DO UPDATE SET
				state = 'in_progress', fingerprint = EXCLUDED.fingerprint, response = NULL,
				expires_at = clock_timestamp() + $5 * interval '1 microsecond', attempt = nextval('` + seq + `')
			WHERE cur.expires_at <= clock_timestamp()
				OR (cur.state = 'retryable' AND cur.fingerprint = EXCLUDED.fingerprint)
			RETURNING attempt, expires_at`,
		read:       `SELECT ` + cols + ` FROM ` + t + ` WHERE` + pk,
		readLocked: `SELECT ` + cols + ` FROM ` + t + ` WHERE` + pk + ` FOR KEY SHARE`,
		// The fence, in one statement: lock the row (waiting for any write
		// in flight), then read the clock, then move the row on only if
		// the owning attempt of a live, in-progress record with the same
		// fingerprint asks. The row as locked and the one clock reading
		// come back with the outcome, so a refusal names the reason the
		// UPDATE saw.
		finish: `WITH cur AS (
				SELECT state, fingerprint, attempt, expires_at FROM ` + t + ` WHERE` + pk + ` FOR UPDATE
			), clock AS MATERIALIZED (
				SELECT clock_timestamp() AS now FROM (SELECT count(*) FROM cur) AS locked
			), upd AS (
				UPDATE ` + t + ` AS r SET state = $6, response = $7, expires_at = clock.now + $8 * interval '1 microsecond'
				FROM cur, clock
				WHERE r.tenant = $1 AND r.operation = $2 AND r.key = $3
					AND cur.fingerprint = $4 AND cur.attempt = $5 AND cur.state = 'in_progress' AND cur.expires_at > clock.now
				RETURNING r.expires_at
			)
			SELECT cur.state, cur.fingerprint, cur.attempt, cur.expires_at > clock.now, upd.expires_at
			FROM clock LEFT JOIN cur ON true LEFT JOIN upd ON true`,
		lock: `LOCK TABLE ` + t + ` IN SHARE ROW EXCLUSIVE MODE`,
		// The outer condition is checked again on the row as it is when
		// deleted, so a row taken over meanwhile is never removed (nor is
		// a row updated meanwhile: its new version has another ctid).
		// The rows are named by ctid, a TID scan whatever the batch
		// size: as a generic plan, with the LIMIT unknown, IN (…) was
		// planned as a hash join over a scan of the whole table. The
		// now() term (the statement's start, never after the clock) bounds
		// the index scan; clock_timestamp(), being volatile, cannot.
		purge: `DELETE FROM ` + t + ` WHERE ctid = ANY (ARRAY(
				SELECT ctid FROM ` + t + ` WHERE expires_at <= now() AND expires_at <= clock_timestamp()
				ORDER BY expires_at LIMIT $1))
			AND expires_at <= clock_timestamp()`,
	}}
	s.owners = sqlstore.NewOwners(p, s.finish)
	s.Front = idempotency.NewFront(&sqlstore.IdempotencyBackend{Owners: s.owners, BeginFunc: s.begin, GetFunc: s.get})
	return s, nil
}

// Policy returns the store's lease and retention.
func (s *IdempotencyStore) Policy() idempotency.Policy { return s.policy }

// maxClaimTries bounds Begin's claim-then-read loop. Each turn needs the
// live row found by the read to expire before the next claim, so a second
// turn is rare and a ninth means something is badly wrong.
const maxClaimTries = 8

// begin implements idempotency.Backend's Begin.
func (s *IdempotencyStore) begin(ctx context.Context, k idempotency.Key, fingerprint string) (idempotency.Record, bool, error) {
	pool := s.db.Pool()
	for range maxClaimTries {
		var (
			attempt int64
			expires time.Time
		)
		err := pool.QueryRow(ctx, s.q.claim, k.Tenant, k.Operation, k.Value, fingerprint, s.policy.Lease.Microseconds()).
			Scan(&attempt, &expires)
		if err == nil {
			return idempotency.Record{State: idempotency.StateInProgress, Fingerprint: fingerprint,
				ExpiresAt: expires, Attempt: uint64(attempt)}, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return idempotency.Record{}, false, fmt.Errorf("postgres: idempotency begin %s: %w", k, err)
		}
		// A live record holds the key. Read it to answer; if it expired or
		// was released in the meantime, claim again.
		cur, found, err := s.readLive(ctx, k)
		if err != nil {
			return idempotency.Record{}, false, fmt.Errorf("postgres: idempotency begin %s: %w", k, err)
		}
		if !found {
			continue
		}
		if rec, claim, err := idempotency.BeginExisting(k, cur, fingerprint); !claim {
			return rec, false, err
		}
	}
	return idempotency.Record{}, false, fmt.Errorf("postgres: idempotency begin %s: the record changed under %d claims in a row", k, maxClaimTries)
}

// readLive returns the live record of k. It reads without locking, except
// when the row it finds has expired: a write may have judged the row live
// just before and not yet committed, so readLive reads again, locking the
// row, after any such write, before it reports the key free. Once anyone
// has been told of a lapse, no write judged before it can land, and any
// write after it judges the lapse too (writers read the clock once they
// hold the row).
func (s *IdempotencyStore) readLive(ctx context.Context, k idempotency.Key) (idempotency.Record, bool, error) {
	rec, found, live, err := s.readRow(ctx, s.q.read, k)
	if err != nil || !found || live {
		return rec, found && live, err
	}
	rec, found, live, err = s.readRow(ctx, s.q.readLocked, k)
	if err != nil || !found || !live {
		return idempotency.Record{}, false, err
	}
	return rec, true, nil
}

// readRow reads the row of k with query, live or not.
func (s *IdempotencyStore) readRow(ctx context.Context, query string, k idempotency.Key) (rec idempotency.Record, found, live bool, err error) {
	var (
		state   string
		attempt int64
	)
	err = s.db.Pool().QueryRow(ctx, query, k.Tenant, k.Operation, k.Value).
		Scan(&state, &rec.Fingerprint, &rec.Response, &rec.ExpiresAt, &attempt, &live)
	if errors.Is(err, pgx.ErrNoRows) {
		return idempotency.Record{}, false, false, nil
	}
	if err != nil {
		return idempotency.Record{}, false, false, err
	}
	rec.State, rec.Attempt = idempotency.State(state), uint64(attempt)
	sqlstore.ShapeResponse(&rec)
	return rec, true, live, nil
}

// finish applies an owner transition with one statement that locks the
// row, reads the clock and updates the row if the attempt owns it, and
// classifies a refusal from the row and the clock reading the statement
// judged by.
func (s *IdempotencyStore) finish(ctx context.Context, op string, k idempotency.Key, fingerprint string, attempt uint64,
	state idempotency.State, response []byte, validity time.Duration) (time.Time, error) {
	var (
		curState, curFP *string
		curAttempt      *int64
		live            *bool
		expires         *time.Time
	)
	err := s.db.Pool().QueryRow(ctx, s.q.finish, k.Tenant, k.Operation, k.Value, fingerprint, int64(attempt),
		string(state), response, validity.Microseconds()).Scan(&curState, &curFP, &curAttempt, &live, &expires)
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres: idempotency %s %s: %w", op, k, err)
	}
	if expires != nil {
		return *expires, nil
	}
	if curState == nil || live == nil || !*live {
		return time.Time{}, idempotency.Refusal(op, k, idempotency.Record{}, false, fingerprint, attempt)
	}
	cur := idempotency.Record{State: idempotency.State(*curState), Fingerprint: *curFP, Attempt: uint64(*curAttempt)}
	return time.Time{}, idempotency.Refusal(op, k, cur, true, fingerprint, attempt)
}

// get implements idempotency.Backend's Get.
func (s *IdempotencyStore) get(ctx context.Context, k idempotency.Key) (idempotency.Record, bool, error) {
	rec, found, err := s.readLive(ctx, k)
	if err != nil {
		return idempotency.Record{}, false, fmt.Errorf("postgres: idempotency get %s: %w", k, err)
	}
	return rec, found, nil
}

// Purge implements idempotency.Purger: it deletes expired records in
// batches, each its own short transaction, until none is left or ctx is
// done. Each batch first takes a table lock that waits for the claims and
// owner writes in flight and holds new ones back until it commits (reads
// go on): a claim that started before the delete can then never recreate
// a deleted key with an attempt drawn before a later owner's.
func (s *IdempotencyStore) Purge(ctx context.Context) (int64, error) {
	return sqlstore.Purge(ctx, &dialect, "idempotency", func(ctx context.Context) (n int64, err error) {
		err = pgx.BeginFunc(ctx, s.db.Pool(), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, s.q.lock); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, s.q.purge, sqlstore.PurgeBatch)
			n = tag.RowsAffected()
			return err
		})
		return n, err
	})
}
