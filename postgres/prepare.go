package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/prepare"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PrepareOptions configures NewPrepareBackend. The zero value is the
// documented default.
type PrepareOptions struct {
	// PurgeEvery makes every n-th Prepare first delete up to 256 expired
	// rows (default 1000). Negative turns the lazy purge off; call Purge
	// instead.
	PurgeEvery int
}

// PrepareBackend stores prepare-key reservations in the table
// factum_prepare: one row per (name, key), primary key (name, key). It
// implements prepare.Backend and prepare.KeyChanger and is safe for
// concurrent use.
//
// Every operation is one statement, so one transaction: Prepare is an
// INSERT … ON CONFLICT DO UPDATE … WHERE the stored row has expired, which
// takes over only lapsed reservations; the conditional operations carry
// their condition in their WHERE clause; the key change is one call of the
// function factum_prepare_change_key, whose steps commit or fail together.
//
// Expiry is judged by the database's clock, never by the application's:
// every instance of an application sharing the database then draws the line
// at the same moment, whatever their clocks' skew. It is read with
// clock_timestamp() at the moment the row is written, once the statement
// holds the row's lock, not with now() (the transaction's start), so a
// write that waited for a lock while the reservation lapsed judges the
// lapse. A Get that finds a lapsed row reads it again under a row lock
// before it reports the lapse, after any write still in flight that judged
// the row live; so once anyone has seen a reservation lapse, its old holder
// can no longer reprepare, release or move it. Expired
// rows stay (GetValue shows them) until the key is prepared again, a lazy
// purge (PurgeEvery) or Purge removes them.
type PrepareBackend struct {
	db         *DB
	purgeEvery uint64
	prepares   atomic.Uint64
}

var (
	_ prepare.Backend    = (*PrepareBackend)(nil)
	_ prepare.KeyChanger = (*PrepareBackend)(nil)
)

// NewPrepareBackend returns a backend on db, creating or migrating its table
// (component "prepare") if needed.
func NewPrepareBackend(ctx context.Context, db *DB, opts PrepareOptions) (*PrepareBackend, error) {
	purgeEvery, err := sqlstore.SetupPrepare(ctx, &dialect, db.migrator(), migrations, opts.PurgeEvery)
	if err != nil {
		return nil, err
	}
	return &PrepareBackend{db: db, purgeEvery: purgeEvery}, nil
}

// prepareNowMs is the database's clock in Unix milliseconds when it is
// read: clock_timestamp() moves during a statement, so it judges a row at
// the moment it is evaluated on it, and in an ON CONFLICT clause that is
// after the row is locked.
const prepareNowMs = `floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`

// prepareLocked starts a statement that locks the row of ($1, $2), if
// there is one, and then reads the clock: cur is the row as locked (after
// any write in flight), clock.ms the moment it is judged at.
const prepareLocked = `WITH cur AS (
		SELECT value, expires_at FROM factum_prepare WHERE name = $1 AND key = $2 FOR UPDATE
	), clock AS MATERIALIZED (
		SELECT ` + prepareNowMs + ` AS ms FROM (SELECT count(*) FROM cur) AS locked
	) `

// prepareNotHeld is the SQLSTATE factum_prepare_change_key raises when the
// old key is not held by the old value.
const prepareNotHeld = "FP001"

const (
	prepareUpsert = `INSERT INTO factum_prepare AS p (name, key, value, expires_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (name, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
		WHERE p.expires_at < ` + prepareNowMs
	prepareGet       = `SELECT value, expires_at, expires_at < ` + prepareNowMs + ` FROM factum_prepare WHERE name = $1 AND key = $2`
	prepareGetLocked = prepareGet + ` FOR KEY SHARE`
	// SKIP LOCKED: a purge never waits for, nor blocks, a writer of a row.
	// The literal term lets the planner use the partial index, and the
	// now() term (the statement's start, never after the clock) bounds
	// its scan, which the volatile clock term cannot. The rows are named
	// by ctid (they are locked, so it cannot change before the delete):
	// as a generic plan, with the LIMIT unknown, IN (…) was planned as a
	// hash join over a scan of the whole table.
	preparePurgeBatch = `DELETE FROM factum_prepare WHERE ctid = ANY (ARRAY(
		SELECT ctid FROM factum_prepare
		WHERE expires_at < 9223372036854775807 AND expires_at < floor(extract(epoch FROM now()) * 1000)::bigint
			AND expires_at < ` + prepareNowMs + `
		ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED))`
)

// Prepare implements prepare.Backend.
func (b *PrepareBackend) Prepare(ctx context.Context, name, key string, value []byte, expiresAt int64) (bool, error) {
	if b.purgeEvery > 0 && b.prepares.Add(1)%b.purgeEvery == 0 {
		// Its own statement, committed before the upsert, so that the rows
		// it locks are released before the upsert waits for any lock.
		if _, err := b.purge(ctx, 256); err != nil {
			return false, fmt.Errorf("postgres: prepare: %w", err)
		}
	}
	tag, err := b.db.Pool().Exec(ctx, prepareUpsert, name, key, value, expiresAt)
	if err != nil {
		return false, fmt.Errorf("postgres: prepare: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// Get implements prepare.Backend. It reads without locking, except when
// the row it finds has lapsed: a write may have judged the row live just
// before and not yet committed, so Get reads again, locking the row, after
// any such write, before it reports the lapse.
func (b *PrepareBackend) Get(ctx context.Context, name, key string) (prepare.Record, bool, error) {
	r, found, err := b.get(ctx, prepareGet, name, key)
	if err != nil || !found || !r.Expired {
		return r, found, err
	}
	return b.get(ctx, prepareGetLocked, name, key)
}

func (b *PrepareBackend) get(ctx context.Context, query, name, key string) (prepare.Record, bool, error) {
	var r prepare.Record
	err := b.db.Pool().QueryRow(ctx, query, name, key).Scan(&r.Value, &r.ExpiresAt, &r.Expired)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return prepare.Record{}, false, nil
	case err != nil:
		return prepare.Record{}, false, fmt.Errorf("postgres: get: %w", err)
	}
	return r, true, nil
}

// Rollback implements prepare.Backend. It deletes an expired row too, but
// reports true only for a live one; RETURNING reads the clock after the
// DELETE holds the row.
func (b *PrepareBackend) Rollback(ctx context.Context, name, key string) (bool, error) {
	var live bool
	err := b.db.Pool().QueryRow(ctx,
		`DELETE FROM factum_prepare WHERE name = $1 AND key = $2 RETURNING expires_at >= `+prepareNowMs,
		name, key).Scan(&live)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("postgres: rollback: %w", err)
	}
	return live, nil
}

// RollbackValue implements prepare.Backend: one statement that locks the
// row, reads the clock, and deletes the row if value holds it live.
func (b *PrepareBackend) RollbackValue(ctx context.Context, name, key string, value []byte) (bool, error) {
	tag, err := b.db.Pool().Exec(ctx, prepareLocked+`
		DELETE FROM factum_prepare AS p USING cur, clock
		WHERE p.name = $1 AND p.key = $2 AND cur.value = $3 AND cur.expires_at >= clock.ms`,
		name, key, value)
	if err != nil {
		return false, fmt.Errorf("postgres: rollback value: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// Reprepare implements prepare.Backend: one statement that locks the row,
// reads the clock, and replaces the value if the old one holds it live.
// An UPDATE never creates a row.
func (b *PrepareBackend) Reprepare(ctx context.Context, name, key string, oldValue, newValue []byte, expiresAt int64) (bool, error) {
	tag, err := b.db.Pool().Exec(ctx, prepareLocked+`
		UPDATE factum_prepare AS p SET value = $3, expires_at = $4 FROM cur, clock
		WHERE p.name = $1 AND p.key = $2 AND cur.value = $5 AND cur.expires_at >= clock.ms`,
		name, key, newValue, expiresAt, oldValue)
	if err != nil {
		return false, fmt.Errorf("postgres: reprepare: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// ChangeKey implements prepare.KeyChanger with one call of
// factum_prepare_change_key (see the migration): one statement, one
// transaction, one round trip.
func (b *PrepareBackend) ChangeKey(ctx context.Context, name, oldKey string, oldValue []byte, newKey string, newValue []byte, expiresAt int64) (bool, error) {
	var changed bool
	err := b.db.Pool().QueryRow(ctx, `SELECT factum_prepare_change_key($1, $2, $3, $4, $5, $6)`,
		name, oldKey, oldValue, newKey, newValue, expiresAt).Scan(&changed)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == prepareNotHeld {
			return false, prepare.ErrNotHeld
		}
		return false, fmt.Errorf("postgres: change key: %w", err)
	}
	return changed, nil
}

// Purge deletes every expired row, in batches so that no statement holds
// many locks, and returns how many it deleted.
func (b *PrepareBackend) Purge(ctx context.Context) (int64, error) {
	return sqlstore.Purge(ctx, &dialect, "prepare keys", func(ctx context.Context) (int64, error) {
		return b.purge(ctx, sqlstore.PurgeBatch)
	})
}

func (b *PrepareBackend) purge(ctx context.Context, limit int) (int64, error) {
	tag, err := b.db.Pool().Exec(ctx, preparePurgeBatch, limit)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
