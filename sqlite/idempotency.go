package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/sqlstore"
)

// DefaultIdempotencyPrefix starts the names of the idempotency tables
// unless IdempotencyOptions.Prefix says otherwise.
const DefaultIdempotencyPrefix = "factum_"

// IdempotencyOptions configures NewIdempotencyStore.
type IdempotencyOptions struct {
	// Policy sets the lease and the retention; the zero value is the
	// default policy.
	Policy idempotency.Policy
	// Prefix starts the table names (default DefaultIdempotencyPrefix):
	// letters, digits and '_'.
	Prefix string
	// Clock returns the current time; nil means time.Now. Expiry is judged
	// by this one clock, which every process sharing the file on one
	// machine also reads, read inside each write transaction once it holds
	// the database's write lock.
	Clock func() time.Time
}

// IdempotencyStore is an idempotency.Store on SQLite.
//
// Records live in one table whose primary key is (tenant, operation, key).
// Every write is one IMMEDIATE transaction on the writer connection, and
// expiry is judged by IdempotencyOptions.Clock read once that transaction
// holds SQLite's write lock: however long a call queued for the lock (in
// this process or behind another process on the file), it judges expiry
// at the moment it writes. Begin's single INSERT … ON CONFLICT DO UPDATE
// claims the key when it is absent, expired or released, taking the next
// attempt from a counter under the same lock, and otherwise the row is
// read back under that lock to answer. Complete, Fail and Renew are single
// UPDATE statements conditional on the fingerprint, the attempt, the
// in-progress state and an unexpired lease; when one changes nothing, the
// row is read under the same lock and the same clock reading to tell why.
// Reads go without the lock, except that a read that finds an expired row
// reads it again under the write lock before it reports the key free, so
// once anyone has been told a lease lapsed, its old owner can no longer
// complete, fail or renew the key. Expired rows are invisible, are
// overwritten in place by the next Begin of their key, and are deleted by
// Purge.
type IdempotencyStore struct {
	*idempotency.Front // over the backend: owners, begin and get
	owners             sqlstore.Owners
	db                 *DB
	policy             idempotency.Policy
	clock              func() time.Time
	q                  idempotencyQueries
}

type idempotencyQueries struct {
	claim, advance, read, finish, purge string
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
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	const cols = `state, fingerprint, response, expires_at, attempt`
	s := &IdempotencyStore{db: db, policy: p, clock: opts.Clock, q: idempotencyQueries{
		// Takes the key when it is absent, expired, or released by the
		// same fingerprint; otherwise changes nothing and returns no row.
		claim: `INSERT INTO ` + t + ` (tenant, operation, key, state, fingerprint, response, expires_at, attempt)
			VALUES (?1, ?2, ?3, 'in_progress', ?4, NULL, ?5, (SELECT last + 1 FROM ` + seq + ` WHERE id = 1))
			ON CONFLICT (tenant, operation, key) DO UPDATE SET
				state = 'in_progress', fingerprint = excluded.fingerprint, response = NULL,
				expires_at = excluded.expires_at, attempt = excluded.attempt
			WHERE ` + t + `.expires_at <= ?6
				OR (` + t + `.state = 'retryable' AND ` + t + `.fingerprint = excluded.fingerprint)
			RETURNING attempt, expires_at`,
		read: `SELECT ` + cols + ` FROM ` + t + ` WHERE tenant = ?1 AND operation = ?2 AND key = ?3`,
		// The fence: only the owning attempt of a live, in-progress record
		// with the same fingerprint moves it on.
		finish: `UPDATE ` + t + ` SET state = ?7, response = ?8, expires_at = ?9
			WHERE tenant = ?1 AND operation = ?2 AND key = ?3 AND fingerprint = ?4 AND attempt = ?5
				AND state = 'in_progress' AND expires_at > ?6
			RETURNING expires_at`,
		advance: `UPDATE ` + seq + ` SET last = ?1 WHERE id = 1 AND last < ?1`,
		purge: `DELETE FROM ` + t + ` WHERE rowid IN
			(SELECT rowid FROM ` + t + ` WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)`,
	}}
	s.owners = sqlstore.NewOwners(p, s.finish)
	s.Front = idempotency.NewFront(&sqlstore.IdempotencyBackend{Owners: s.owners, BeginFunc: s.begin, GetFunc: s.get})
	return s, nil
}

// Policy returns the store's lease and retention.
func (s *IdempotencyStore) Policy() idempotency.Policy { return s.policy }

func (s *IdempotencyStore) now() int64 { return s.clock().UnixMicro() }

// begin implements idempotency.Backend's Begin.
func (s *IdempotencyStore) begin(ctx context.Context, k idempotency.Key, fingerprint string) (idempotency.Record, bool, error) {
	tx, err := s.db.Writer().BeginTx(ctx, nil) // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		return idempotency.Record{}, false, fmt.Errorf("sqlite: idempotency begin %s: %w", k, err)
	}
	defer tx.Rollback()
	now := s.now()
	exp := now + s.policy.Lease.Microseconds()
	var attempt, expires int64
	err = tx.QueryRowContext(ctx, s.q.claim, k.Tenant, k.Operation, k.Value, fingerprint, exp, now).Scan(&attempt, &expires)
	switch {
	case err == nil:
		if _, err := tx.ExecContext(ctx, s.q.advance, attempt); err != nil {
			return idempotency.Record{}, false, fmt.Errorf("sqlite: idempotency begin %s: %w", k, err)
		}
		if err := tx.Commit(); err != nil {
			return idempotency.Record{}, false, fmt.Errorf("sqlite: idempotency begin %s: %w", k, err)
		}
		return idempotency.Record{State: idempotency.StateInProgress, Fingerprint: fingerprint,
			ExpiresAt: time.UnixMicro(expires), Attempt: uint64(attempt)}, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return idempotency.Record{}, false, fmt.Errorf("sqlite: idempotency begin %s: %w", k, err)
	}
	// The claim did not apply, so a live record holds the key; the write
	// lock keeps it as it was when the claim looked.
	cur, found, err := s.readLive(tx.QueryRowContext(ctx, s.q.read, k.Tenant, k.Operation, k.Value), now)
	if err != nil || !found {
		return idempotency.Record{}, false, fmt.Errorf("sqlite: idempotency begin %s: claim refused but no live record (found=%v): %v", k, found, err)
	}
	rec, claim, err := idempotency.BeginExisting(k, cur, fingerprint)
	if claim {
		return idempotency.Record{}, false, fmt.Errorf("sqlite: idempotency begin %s: claim refused on a released record", k)
	}
	return rec, false, err
}

// finish applies an owner transition in one IMMEDIATE transaction: the
// clock is read once the transaction holds the write lock, so expiry is
// judged at the moment of the write however long the call queued for the
// lock, and when the conditional UPDATE changes nothing the row is read
// under the same lock and the same reading of the clock, so the refusal
// names the reason the UPDATE saw.
func (s *IdempotencyStore) finish(ctx context.Context, op string, k idempotency.Key, fingerprint string, attempt uint64,
	state idempotency.State, response []byte, validity time.Duration) (time.Time, error) {
	tx, err := s.db.Writer().BeginTx(ctx, nil) // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		return time.Time{}, fmt.Errorf("sqlite: idempotency %s %s: %w", op, k, err)
	}
	defer tx.Rollback()
	now := s.now()
	var expires int64
	err = tx.QueryRowContext(ctx, s.q.finish, k.Tenant, k.Operation, k.Value, fingerprint, int64(attempt), now,
		string(state), response, now+validity.Microseconds()).Scan(&expires)
	if err == nil {
		if err := tx.Commit(); err != nil {
			return time.Time{}, fmt.Errorf("sqlite: idempotency %s %s: %w", op, k, err)
		}
		return time.UnixMicro(expires), nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("sqlite: idempotency %s %s: %w", op, k, err)
	}
	cur, found, err := s.readLive(tx.QueryRowContext(ctx, s.q.read, k.Tenant, k.Operation, k.Value), now)
	if err != nil {
		return time.Time{}, fmt.Errorf("sqlite: idempotency %s %s: %w", op, k, err)
	}
	return time.Time{}, idempotency.Refusal(op, k, cur, found, fingerprint, attempt)
}

// get implements idempotency.Backend's Get. It reads without the write lock,
// except when the row it finds has expired: then a writer may have judged
// the row live just before and not yet committed, so Get reads again under
// the write lock, after any such write, before it reports the key free.
// Once a Get has reported a lapse, no write judged before it can land.
func (s *IdempotencyStore) get(ctx context.Context, k idempotency.Key) (idempotency.Record, bool, error) {
	rec, state, err := s.readRow(s.db.Reader().QueryRowContext(ctx, s.q.read, k.Tenant, k.Operation, k.Value))
	if err != nil {
		return idempotency.Record{}, false, fmt.Errorf("sqlite: idempotency get %s: %w", k, err)
	}
	switch {
	case state == rowAbsent:
		return idempotency.Record{}, false, nil
	case rec.ExpiresAt.UnixMicro() > s.now():
		return rec, true, nil
	}
	tx, err := s.db.Writer().BeginTx(ctx, nil) // BEGIN IMMEDIATE: after every write in flight
	if err != nil {
		return idempotency.Record{}, false, fmt.Errorf("sqlite: idempotency get %s: %w", k, err)
	}
	defer tx.Rollback()
	rec, found, err := s.readLive(tx.QueryRowContext(ctx, s.q.read, k.Tenant, k.Operation, k.Value), s.now())
	if err != nil {
		return idempotency.Record{}, false, fmt.Errorf("sqlite: idempotency get %s: %w", k, err)
	}
	return rec, found, nil
}

// Purge implements idempotency.Purger: it deletes expired records in
// batches, each its own short write, until none is left or ctx is done.
func (s *IdempotencyStore) Purge(ctx context.Context) (int64, error) {
	return sqlstore.Purge(ctx, &dialect, "idempotency", func(ctx context.Context) (int64, error) {
		res, err := s.db.Writer().ExecContext(ctx, s.q.purge, s.now(), sqlstore.PurgeBatch)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}

// rowState tells a row that is there from one that is not.
type rowState bool

const (
	rowAbsent  rowState = false
	rowPresent rowState = true
)

// readRow reads one record row, live or not.
func (s *IdempotencyStore) readRow(row *sql.Row) (idempotency.Record, rowState, error) {
	var (
		rec              idempotency.Record
		state            string
		expires, attempt int64
	)
	err := row.Scan(&state, &rec.Fingerprint, &rec.Response, &expires, &attempt)
	if errors.Is(err, sql.ErrNoRows) {
		return idempotency.Record{}, rowAbsent, nil
	}
	if err != nil {
		return idempotency.Record{}, rowAbsent, err
	}
	rec.State, rec.ExpiresAt, rec.Attempt = idempotency.State(state), time.UnixMicro(expires), uint64(attempt)
	sqlstore.ShapeResponse(&rec)
	return rec, rowPresent, nil
}

// readLive reads one record row and reports it only if it is live at now
// (Unix microseconds).
func (s *IdempotencyStore) readLive(row *sql.Row, now int64) (idempotency.Record, bool, error) {
	rec, state, err := s.readRow(row)
	if err != nil || state == rowAbsent || rec.ExpiresAt.UnixMicro() <= now {
		return idempotency.Record{}, false, err
	}
	return rec, true, nil
}
