package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/prepare"
)

// PrepareOptions configures NewPrepareBackend. The zero value is the
// documented default.
type PrepareOptions struct {
	// Now is the clock that judges expiry (default time.Now). Tests pass a
	// manual clock.
	Now func() time.Time
	// PurgeEvery makes every n-th Prepare first delete up to 256 expired
	// rows, in the same transaction (default 1000). Negative turns the lazy
	// purge off; call Purge instead.
	PurgeEvery int
}

// PrepareBackend stores prepare-key reservations in the table
// factum_prepare: one row per (name, key), primary key (name, key). It
// implements prepare.Backend and prepare.KeyChanger and is safe for
// concurrent use.
//
// Every operation is one statement, and the key change one savepoint, on
// the database's single write connection, under SQLite's write lock, which
// makes each atomic across processes sharing the file. Prepare is an
// INSERT … ON CONFLICT DO UPDATE … WHERE the stored row has expired, so it
// takes over only lapsed reservations. Concurrent writes are committed
// together in one transaction, with the other writes of the database
// queued beside them (each with its own outcome, as if run one after
// another), so that they share one fsync.
//
// Cancellation: a write whose context ends before its transaction starts
// is never written; once it has started, the call waits for the outcome
// (one transaction), so an error always means "not written".
//
// Expiry is judged by the caller's clock (PrepareOptions.Now), read inside
// the write transaction once it holds SQLite's write lock and passed into
// the statement: the database is embedded, so every process using the file
// runs on this machine's clock, and a write that queued for the lock while
// a reservation lapsed judges the lapse. A Get that finds a lapsed row
// reads it again under the write lock before it reports the lapse, after
// any write still in flight that judged the row live; so once anyone has
// seen a reservation lapse, its old holder can no longer reprepare,
// release or move it. Expired rows stay (GetValue shows them)
// until the key is prepared again, a lazy purge (PurgeEvery) or Purge
// removes them.
type PrepareBackend struct {
	db         *DB
	now        func() time.Time
	purgeEvery uint64
	prepares   atomic.Uint64
	batcher    *writeBatcher // the DB's
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
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &PrepareBackend{db: db, now: opts.Now, batcher: db.batch, purgeEvery: purgeEvery}, nil
}

func (b *PrepareBackend) nowMilli() int64 { return b.now().UnixMilli() }

const (
	prepareUpsert = `INSERT INTO factum_prepare (name, key, value, expires_at) VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT (name, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
		WHERE factum_prepare.expires_at < ?5`
	prepareDeleteValue = `DELETE FROM factum_prepare
		WHERE name = ?1 AND key = ?2 AND value = ?3 AND expires_at >= ?4`
	// The literal term lets SQLite use the partial index.
	preparePurgeBatch = `DELETE FROM factum_prepare WHERE (name, key) IN (
		SELECT name, key FROM factum_prepare
		WHERE expires_at < 9223372036854775807 AND expires_at < ?1 LIMIT ?2)`
)

// exec runs one statement as a batched write and reports whether it
// changed a row. args builds the statement's arguments from the clock,
// read once the batch's transaction holds the write lock, so expiry is
// judged at the moment of the write however long the call queued.
func (b *PrepareBackend) exec(ctx context.Context, purge bool, query string, args func(nowMilli int64) []any) (bool, error) {
	var changed bool
	err := b.batcher.do(&batchWrite{ctx: ctx, apply: func(ctx context.Context, tx *sql.Tx) error {
		if purge {
			// At most 256 rows, so that a batch that purges stays short.
			if _, err := tx.ExecContext(ctx, preparePurgeBatch, b.nowMilli(), 256); err != nil {
				return fmt.Errorf("purge: %w", err)
			}
		}
		res, err := tx.ExecContext(ctx, query, args(b.nowMilli())...)
		if err != nil {
			return err
		}
		changed, err = prepareAffected(res)
		return err
	}})
	return changed, err
}

// Prepare implements prepare.Backend.
func (b *PrepareBackend) Prepare(ctx context.Context, name, key string, value []byte, expiresAt int64) (bool, error) {
	purge := b.purgeEvery > 0 && b.prepares.Add(1)%b.purgeEvery == 0
	ok, err := b.exec(ctx, purge, prepareUpsert, func(now int64) []any { return []any{name, key, value, expiresAt, now} })
	if err != nil {
		return false, fmt.Errorf("sqlite: prepare: %w", err)
	}
	return ok, nil
}

// Get implements prepare.Backend. It reads without the write lock, except
// when the row it finds has lapsed: a write may have judged the row live
// just before and not yet committed, so Get reads again as a write, after
// any such write, before it reports the lapse. Once anyone has seen a
// reservation lapse, its old holder can no longer reprepare, release or
// move it.
func (b *PrepareBackend) Get(ctx context.Context, name, key string) (prepare.Record, bool, error) {
	r, found, err := b.get(ctx, b.db.Reader(), name, key)
	if err != nil || !found || !r.Expired {
		return r, found, err
	}
	err = b.batcher.do(&batchWrite{ctx: ctx, apply: func(ctx context.Context, tx *sql.Tx) error {
		r, found, err = b.get(ctx, tx, name, key)
		return err
	}})
	if err != nil {
		return prepare.Record{}, false, err
	}
	return r, found, nil
}

// queryer is what get reads through: the reader pool or the batch's
// transaction.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (b *PrepareBackend) get(ctx context.Context, q queryer, name, key string) (prepare.Record, bool, error) {
	var r prepare.Record
	err := q.QueryRowContext(ctx,
		`SELECT value, expires_at FROM factum_prepare WHERE name = ?1 AND key = ?2`, name, key).
		Scan(&r.Value, &r.ExpiresAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return prepare.Record{}, false, nil
	case err != nil:
		return prepare.Record{}, false, fmt.Errorf("sqlite: get: %w", err)
	}
	r.Expired = prepare.Expired(r.ExpiresAt, b.nowMilli())
	return r, true, nil
}

// Rollback implements prepare.Backend. It deletes an expired row too, but
// reports true only for a live one.
func (b *PrepareBackend) Rollback(ctx context.Context, name, key string) (bool, error) {
	var live bool
	err := b.batcher.do(&batchWrite{ctx: ctx, apply: func(ctx context.Context, tx *sql.Tx) error {
		live = false
		var expiresAt int64
		err := tx.QueryRowContext(ctx,
			`DELETE FROM factum_prepare WHERE name = ?1 AND key = ?2 RETURNING expires_at`, name, key).
			Scan(&expiresAt)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		live = !prepare.Expired(expiresAt, b.nowMilli())
		return nil
	}})
	if err != nil {
		return false, fmt.Errorf("sqlite: rollback: %w", err)
	}
	return live, nil
}

// RollbackValue implements prepare.Backend.
func (b *PrepareBackend) RollbackValue(ctx context.Context, name, key string, value []byte) (bool, error) {
	ok, err := b.exec(ctx, false, prepareDeleteValue, func(now int64) []any { return []any{name, key, value, now} })
	if err != nil {
		return false, fmt.Errorf("sqlite: rollback value: %w", err)
	}
	return ok, nil
}

// Reprepare implements prepare.Backend. An UPDATE never creates a row.
func (b *PrepareBackend) Reprepare(ctx context.Context, name, key string, oldValue, newValue []byte, expiresAt int64) (bool, error) {
	ok, err := b.exec(ctx, false,
		`UPDATE factum_prepare SET value = ?3, expires_at = ?4
		WHERE name = ?1 AND key = ?2 AND value = ?5 AND expires_at >= ?6`,
		func(now int64) []any { return []any{name, key, newValue, expiresAt, oldValue, now} })
	if err != nil {
		return false, fmt.Errorf("sqlite: reprepare: %w", err)
	}
	return ok, nil
}

// ChangeKey implements prepare.KeyChanger under one savepoint: take the new
// key (if free or lapsed), then delete the old key if the old value holds
// it, and roll back to the savepoint unless both happened.
func (b *PrepareBackend) ChangeKey(ctx context.Context, name, oldKey string, oldValue []byte, newKey string, newValue []byte, expiresAt int64) (bool, error) {
	var changed, notHeld bool
	err := b.batcher.do(&batchWrite{ctx: ctx, apply: func(ctx context.Context, tx *sql.Tx) error {
		changed, notHeld = false, false
		now := b.nowMilli()
		if _, err := tx.ExecContext(ctx, `SAVEPOINT factum_prepare_change_key`); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, prepareUpsert, name, newKey, newValue, expiresAt, now)
		if err != nil {
			return err
		}
		took, err := prepareAffected(res)
		if err != nil {
			return err
		}
		if took {
			res, err := tx.ExecContext(ctx, prepareDeleteValue, name, oldKey, oldValue, now)
			if err != nil {
				return err
			}
			if changed, err = prepareAffected(res); err != nil {
				return err
			}
			if !changed {
				notHeld = true
				if _, err := tx.ExecContext(ctx, `ROLLBACK TO factum_prepare_change_key`); err != nil {
					return err
				}
			}
		}
		_, err = tx.ExecContext(ctx, `RELEASE factum_prepare_change_key`)
		return err
	}})
	switch {
	case err != nil:
		return false, fmt.Errorf("sqlite: change key: %w", err)
	case notHeld:
		return false, prepare.ErrNotHeld
	}
	return changed, nil
}

// Purge deletes every expired row, in batches so that other writers are
// not held up, and returns how many it deleted. Each batch is its own
// IMMEDIATE transaction that reads the clock once it holds the write lock.
func (b *PrepareBackend) Purge(ctx context.Context) (int64, error) {
	return sqlstore.Purge(ctx, &dialect, "prepare keys", func(ctx context.Context) (int64, error) {
		return b.purgeOnce(ctx, sqlstore.PurgeBatch)
	})
}

func (b *PrepareBackend) purgeOnce(ctx context.Context, limit int) (int64, error) {
	tx, err := b.db.Writer().BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, preparePurgeBatch, b.nowMilli(), limit)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

func prepareAffected(res sql.Result) (bool, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n > 0, nil
}
