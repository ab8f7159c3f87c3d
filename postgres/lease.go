package postgres

import (
	"context"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/sqlstore"
)

// leaseStmts are the store's lease statements (sqlstore.LeaseStatements),
// behind the shared lease methods: each is one statement that judges
// expiry by clock_timestamp() once it holds the lease's row.
type leaseStmts CheckpointStore

// pgTTL turns a TTL into an interval expression's argument: milliseconds.
func pgTTL(ttl time.Duration) float64 { return float64(ttl) / float64(time.Millisecond) }

// Acquire implements sqlstore.LeaseStatements: one upsert that takes the
// row only when its lease expired, judged by clock_timestamp() once the
// row is locked, and counts the token up.
func (s *leaseStmts) Acquire(ctx context.Context, group factum.Function, holder string, ttl time.Duration) (event.Lease, error) {
	t := sqlstore.ContextTable(s.context, "leases")
	var token int64
	var expires time.Time
	err := s.db.Pool().QueryRow(ctx, `INSERT INTO `+t+` AS l (context, processor, name, holder, token, expires_at)
		VALUES ($1, $2, $3, $4, 1, clock_timestamp() + $5 * interval '1 millisecond')
		ON CONFLICT (context, processor, name) DO UPDATE SET holder = EXCLUDED.holder, token = l.token + 1,
			expires_at = clock_timestamp() + $5 * interval '1 millisecond'
		WHERE l.expires_at <= clock_timestamp()
		RETURNING token, expires_at`, group.Context, group.Processor, group.Name, holder, pgTTL(ttl)).Scan(&token, &expires)
	switch {
	case dialect.NoRows(err):
		return event.Lease{}, event.ErrLeaseHeld
	case err != nil:
		return event.Lease{}, err
	}
	return event.Lease{Group: group, Holder: holder, Token: uint64(token), Expires: expires}, nil
}

// Renew implements sqlstore.LeaseStatements.
func (s *leaseStmts) Renew(ctx context.Context, l event.Lease, ttl time.Duration) (event.Lease, error) {
	err := s.db.Pool().QueryRow(ctx, `UPDATE `+sqlstore.ContextTable(s.context, "leases")+` SET expires_at = clock_timestamp() + $6 * interval '1 millisecond'
		WHERE context = $1 AND processor = $2 AND name = $3 AND holder = $4 AND token = $5 AND expires_at > clock_timestamp()
		RETURNING expires_at`, l.Group.Context, l.Group.Processor, l.Group.Name, l.Holder, int64(l.Token), pgTTL(ttl)).Scan(&l.Expires)
	switch {
	case dialect.NoRows(err):
		return event.Lease{}, event.ErrLeaseLost
	case err != nil:
		return event.Lease{}, err
	}
	return l, nil
}

// Release implements sqlstore.LeaseStatements.
func (s *leaseStmts) Release(ctx context.Context, l event.Lease) error {
	_, err := s.db.Pool().Exec(ctx, `UPDATE `+sqlstore.ContextTable(s.context, "leases")+` SET expires_at = 'epoch'
		WHERE context = $1 AND processor = $2 AND name = $3 AND holder = $4 AND token = $5 AND expires_at > clock_timestamp()`,
		l.Group.Context, l.Group.Processor, l.Group.Name, l.Holder, int64(l.Token))
	return err
}

// SaveFenced implements sqlstore.LeaseStatements: one statement that
// share-locks the lease row while it is in force and saves the position
// only then, so a takeover waits for the save to commit.
func (s *leaseStmts) SaveFenced(ctx context.Context, l event.Lease, pos factum.Position) error {
	table := sqlstore.ContextTable(s.context, "checkpoints")
	var held bool
	err := s.db.Pool().QueryRow(ctx, `WITH l AS (
			SELECT 1 FROM `+sqlstore.ContextTable(s.context, "leases")+`
			WHERE context = $1 AND processor = $2 AND name = $3 AND holder = $4 AND token = $5 AND expires_at > clock_timestamp()
			FOR SHARE
		), saved AS (
			INSERT INTO `+table+` AS c (context, processor, name, tx, seq) SELECT $1, $2, $3, $6, $7 FROM l
			ON CONFLICT (context, processor, name) DO UPDATE SET tx = EXCLUDED.tx, seq = EXCLUDED.seq, updated_at = now()
			WHERE (c.tx, c.seq) < (EXCLUDED.tx, EXCLUDED.seq)
			RETURNING 1
		)
		SELECT EXISTS (SELECT 1 FROM l)`,
		l.Group.Context, l.Group.Processor, l.Group.Name, l.Holder, int64(l.Token), int64(pos.Tx), int64(pos.Seq)).Scan(&held)
	if err == nil && !held {
		return event.ErrLeaseLost
	}
	return err
}
