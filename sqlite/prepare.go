package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/prepare"
)

//go:embed migrations/prepare/*.sql
var prepareMigrations embed.FS

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
// Every operation is one statement, and the key change one IMMEDIATE
// transaction, on the database's single write connection; SQLite's write
// lock makes each atomic across processes sharing the file. Prepare is an
// INSERT … ON CONFLICT DO UPDATE … WHERE the stored row has expired, so it
// takes over only lapsed reservations.
//
// Expiry is judged by the caller's clock (PrepareOptions.Now), passed into
// every statement: the database is embedded, so every process using the
// file runs on this machine's clock. Expired rows stay (GetValue shows them)
// until the key is prepared again, a lazy purge (PurgeEvery) or Purge
// removes them.
type PrepareBackend struct {
	db         *DB
	now        func() time.Time
	purgeEvery uint64
	prepares   atomic.Uint64
}

var (
	_ prepare.Backend    = (*PrepareBackend)(nil)
	_ prepare.KeyChanger = (*PrepareBackend)(nil)
)

// prepareBatch bounds the rows one lazy purge deletes, so a Prepare that
// purges stays short.
const prepareBatch = 256

// NewPrepareBackend returns a backend on db, creating or migrating its table
// (component "prepare") if needed.
func NewPrepareBackend(ctx context.Context, db *DB, opts PrepareOptions) (*PrepareBackend, error) {
	if db == nil {
		return nil, factum.IllegalArgument("sqlite: nil DB")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PurgeEvery == 0 {
		opts.PurgeEvery = 1000
	}
	if err := db.Migrate(ctx, prepareMigrations, "migrations/prepare", "prepare", "factum_"); err != nil {
		return nil, err
	}
	b := &PrepareBackend{db: db, now: opts.Now}
	if opts.PurgeEvery > 0 {
		b.purgeEvery = uint64(opts.PurgeEvery)
	}
	return b, nil
}

func (b *PrepareBackend) nowMilli() int64 { return b.now().UnixMilli() }

const (
	prepareUpsert = `INSERT INTO factum_prepare (name, key, value, expires_at) VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT (name, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
		WHERE factum_prepare.expires_at < ?5`
	// The literal term lets SQLite use the partial index.
	preparePurgeBatch = `DELETE FROM factum_prepare WHERE (name, key) IN (
		SELECT name, key FROM factum_prepare
		WHERE expires_at < 9223372036854775807 AND expires_at < ?1 LIMIT ?2)`
)

// Prepare implements prepare.Backend.
func (b *PrepareBackend) Prepare(ctx context.Context, name, key string, value []byte, expiresAt int64) (bool, error) {
	now := b.nowMilli()
	if b.purgeEvery > 0 && b.prepares.Add(1)%b.purgeEvery == 0 {
		return b.prepareAndPurge(ctx, name, key, value, expiresAt, now)
	}
	res, err := b.db.Writer().ExecContext(ctx, prepareUpsert, name, key, value, expiresAt, now)
	if err != nil {
		return false, fmt.Errorf("sqlite: prepare: %w", err)
	}
	return prepareAffected(res)
}

// prepareAndPurge deletes a batch of expired rows and prepares, in one
// transaction and so at the cost of one commit.
func (b *PrepareBackend) prepareAndPurge(ctx context.Context, name, key string, value []byte, expiresAt, now int64) (bool, error) {
	var ok bool
	err := b.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, preparePurgeBatch, now, prepareBatch); err != nil {
			return fmt.Errorf("purge: %w", err)
		}
		res, err := tx.ExecContext(ctx, prepareUpsert, name, key, value, expiresAt, now)
		if err != nil {
			return err
		}
		ok, err = prepareAffected(res)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: prepare: %w", err)
	}
	return ok, nil
}

// Get implements prepare.Backend.
func (b *PrepareBackend) Get(ctx context.Context, name, key string) (prepare.Record, bool, error) {
	var r prepare.Record
	err := b.db.Reader().QueryRowContext(ctx,
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
	var expiresAt int64
	err := b.db.Writer().QueryRowContext(ctx,
		`DELETE FROM factum_prepare WHERE name = ?1 AND key = ?2 RETURNING expires_at`, name, key).
		Scan(&expiresAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("sqlite: rollback: %w", err)
	}
	return !prepare.Expired(expiresAt, b.nowMilli()), nil
}

// RollbackValue implements prepare.Backend.
func (b *PrepareBackend) RollbackValue(ctx context.Context, name, key string, value []byte) (bool, error) {
	res, err := b.db.Writer().ExecContext(ctx,
		`DELETE FROM factum_prepare WHERE name = ?1 AND key = ?2 AND value = ?3 AND expires_at >= ?4`,
		name, key, value, b.nowMilli())
	if err != nil {
		return false, fmt.Errorf("sqlite: rollback value: %w", err)
	}
	return prepareAffected(res)
}

// Reprepare implements prepare.Backend. An UPDATE never creates a row.
func (b *PrepareBackend) Reprepare(ctx context.Context, name, key string, oldValue, newValue []byte, expiresAt int64) (bool, error) {
	res, err := b.db.Writer().ExecContext(ctx,
		`UPDATE factum_prepare SET value = ?3, expires_at = ?4
		WHERE name = ?1 AND key = ?2 AND value = ?5 AND expires_at >= ?6`,
		name, key, newValue, expiresAt, oldValue, b.nowMilli())
	if err != nil {
		return false, fmt.Errorf("sqlite: reprepare: %w", err)
	}
	return prepareAffected(res)
}

// ChangeKey implements prepare.KeyChanger in one IMMEDIATE transaction:
// take the new key (if free or lapsed), then delete the old key if the old
// value holds it; roll everything back unless both happened.
func (b *PrepareBackend) ChangeKey(ctx context.Context, name, oldKey string, oldValue []byte, newKey string, newValue []byte, expiresAt int64) (bool, error) {
	now := b.nowMilli()
	var changed bool
	err := b.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, prepareUpsert, name, newKey, newValue, expiresAt, now)
		if err != nil {
			return err
		}
		if took, err := prepareAffected(res); err != nil || !took {
			if err == nil {
				err = errPrepareTaken
			}
			return err
		}
		res, err = tx.ExecContext(ctx,
			`DELETE FROM factum_prepare WHERE name = ?1 AND key = ?2 AND value = ?3 AND expires_at >= ?4`,
			name, oldKey, oldValue, now)
		if err != nil {
			return err
		}
		if released, err := prepareAffected(res); err != nil || !released {
			if err == nil {
				err = prepare.ErrNotHeld
			}
			return err
		}
		changed = true
		return nil
	})
	switch {
	case errors.Is(err, errPrepareTaken):
		return false, nil
	case errors.Is(err, prepare.ErrNotHeld):
		return false, err
	case err != nil:
		return false, fmt.Errorf("sqlite: change key: %w", err)
	}
	return changed, nil
}

// errPrepareTaken rolls a key change back when the new key is taken.
var errPrepareTaken = errors.New("new key taken")

// Purge deletes every expired row, in batches so that other writers are
// not held up, and returns how many it deleted.
func (b *PrepareBackend) Purge(ctx context.Context) (int64, error) {
	now := b.nowMilli()
	var total int64
	for {
		res, err := b.db.Writer().ExecContext(ctx, preparePurgeBatch, now, 1000)
		if err != nil {
			return total, fmt.Errorf("sqlite: purge prepare keys: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("sqlite: purge prepare keys: %w", err)
		}
		total += n
		if n < 1000 {
			return total, nil
		}
	}
}

// inTx runs fn in a write transaction, committing when fn returns nil and
// rolling back otherwise.
func (b *PrepareBackend) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := b.db.Writer().BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, prepareRollbackErr(tx.Rollback()))
	}
	return tx.Commit()
}

// prepareRollbackErr drops the error of rolling back a transaction that the
// driver already ended (after a cancelled context, say).
func prepareRollbackErr(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}

func prepareAffected(res sql.Result) (bool, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n > 0, nil
}
