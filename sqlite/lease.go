package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/sqlstore"
)

// leaseStmts are the store's lease statements (sqlstore.LeaseStatements),
// behind the shared lease methods: each runs in a write transaction of its
// own, and judges expiry by the store's clock read once that transaction
// holds SQLite's write lock.
type leaseStmts CheckpointStore

// leaseTx runs fn in a write transaction; now is read once the transaction
// holds the write lock, so every process judges expiry at the moment it
// writes.
func (s *leaseStmts) leaseTx(ctx context.Context, fn func(tx *sql.Tx, now int64) error) error {
	tx, err := s.db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx, s.now().UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}

// Acquire implements sqlstore.LeaseStatements.
func (s *leaseStmts) Acquire(ctx context.Context, group factum.Function, holder string, ttl time.Duration) (event.Lease, error) {
	l := event.Lease{Group: group, Holder: holder}
	err := s.leaseTx(ctx, func(tx *sql.Tx, now int64) error {
		expires := now + ttl.Milliseconds()
		var token int64
		err := tx.QueryRowContext(ctx, `INSERT INTO `+sqlstore.ContextTable(s.context, "leases")+` (context, processor, name, holder, token, expires_at)
			VALUES (?1, ?2, ?3, ?4, 1, ?5)
			ON CONFLICT (context, processor, name) DO UPDATE SET holder = excluded.holder,
				token = `+sqlstore.ContextTable(s.context, "leases")+`.token + 1, expires_at = excluded.expires_at
			WHERE `+sqlstore.ContextTable(s.context, "leases")+`.expires_at <= ?6
			RETURNING token`, group.Context, group.Processor, group.Name, holder, expires, now).Scan(&token)
		if dialect.NoRows(err) {
			return event.ErrLeaseHeld
		}
		l.Token, l.Expires = uint64(token), time.UnixMilli(expires)
		return err
	})
	return l, err
}

// Renew implements sqlstore.LeaseStatements.
func (s *leaseStmts) Renew(ctx context.Context, l event.Lease, ttl time.Duration) (event.Lease, error) {
	err := s.leaseTx(ctx, func(tx *sql.Tx, now int64) error {
		expires := now + ttl.Milliseconds()
		res, err := tx.ExecContext(ctx, `UPDATE `+sqlstore.ContextTable(s.context, "leases")+` SET expires_at = ?6
			WHERE context = ?1 AND processor = ?2 AND name = ?3 AND holder = ?4 AND token = ?5 AND expires_at > ?7`,
			l.Group.Context, l.Group.Processor, l.Group.Name, l.Holder, int64(l.Token), expires, now)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return event.ErrLeaseLost
		}
		l.Expires = time.UnixMilli(expires)
		return nil
	})
	return l, err
}

// Release implements sqlstore.LeaseStatements.
func (s *leaseStmts) Release(ctx context.Context, l event.Lease) error {
	return s.leaseTx(ctx, func(tx *sql.Tx, now int64) error {
		_, err := tx.ExecContext(ctx, `UPDATE `+sqlstore.ContextTable(s.context, "leases")+` SET expires_at = 0
			WHERE context = ?1 AND processor = ?2 AND name = ?3 AND holder = ?4 AND token = ?5 AND expires_at > ?6`,
			l.Group.Context, l.Group.Processor, l.Group.Name, l.Holder, int64(l.Token), now)
		return err
	})
}

// SaveFenced implements sqlstore.LeaseStatements: the lease check and the
// save share one write transaction, which SQLite runs alone.
func (s *leaseStmts) SaveFenced(ctx context.Context, l event.Lease, pos factum.Position) error {
	return s.leaseTx(ctx, func(tx *sql.Tx, now int64) error {
		var held int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+sqlstore.ContextTable(s.context, "leases")+`
			WHERE context = ?1 AND processor = ?2 AND name = ?3 AND holder = ?4 AND token = ?5 AND expires_at > ?6`,
			l.Group.Context, l.Group.Processor, l.Group.Name, l.Holder, int64(l.Token), now).Scan(&held)
		if err != nil {
			return err
		}
		if held == 0 {
			return event.ErrLeaseLost
		}
		_, err = tx.StmtContext(ctx, s.upsert).ExecContext(ctx, l.Group.Context, l.Group.Processor, l.Group.Name, int64(pos.Tx), int64(pos.Seq), now)
		return err
	})
}
