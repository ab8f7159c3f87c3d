package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

// pgTTL turns a TTL into an interval expression's argument: milliseconds.
func pgTTL(ttl time.Duration) float64 { return float64(ttl) / float64(time.Millisecond) }

// Acquire implements event.LeaseStore: one upsert that takes the row only
// when its lease expired, judged by clock_timestamp() once the row is
// locked, and counts the token up.
func (s *CheckpointStore) Acquire(ctx context.Context, group factum.Function, holder string, ttl time.Duration) (event.Lease, error) {
	if err := event.ValidateLease(group, holder, ttl); err != nil {
		return event.Lease{}, err
	}
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
	case errors.Is(err, pgx.ErrNoRows):
		return event.Lease{}, event.ErrLeaseHeld
	case err != nil:
		return event.Lease{}, fmt.Errorf("postgres: acquire the lease of %s: %w", group, err)
	}
	return event.Lease{Group: group, Holder: holder, Token: uint64(token), Expires: expires}, nil
}

// Renew implements event.LeaseStore.
func (s *CheckpointStore) Renew(ctx context.Context, l event.Lease, ttl time.Duration) (event.Lease, error) {
	if err := event.ValidateLease(l.Group, l.Holder, ttl); err != nil {
		return event.Lease{}, err
	}
	err := s.db.Pool().QueryRow(ctx, `UPDATE `+sqlstore.ContextTable(s.context, "leases")+` SET expires_at = clock_timestamp() + $6 * interval '1 millisecond'
		WHERE context = $1 AND processor = $2 AND name = $3 AND holder = $4 AND token = $5 AND expires_at > clock_timestamp()
		RETURNING expires_at`, l.Group.Context, l.Group.Processor, l.Group.Name, l.Holder, int64(l.Token), pgTTL(ttl)).Scan(&l.Expires)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return event.Lease{}, event.ErrLeaseLost
	case err != nil:
		return event.Lease{}, fmt.Errorf("postgres: renew the lease of %s: %w", l.Group, err)
	}
	return l, nil
}

// Release implements event.LeaseStore.
func (s *CheckpointStore) Release(ctx context.Context, l event.Lease) error {
	if err := event.ValidateGroup(l.Group); err != nil {
		return err
	}
	_, err := s.db.Pool().Exec(ctx, `UPDATE `+sqlstore.ContextTable(s.context, "leases")+` SET expires_at = 'epoch'
		WHERE context = $1 AND processor = $2 AND name = $3 AND holder = $4 AND token = $5 AND expires_at > clock_timestamp()`,
		l.Group.Context, l.Group.Processor, l.Group.Name, l.Holder, int64(l.Token))
	return sqlstore.LeaseError(&dialect, "release", l.Group, err)
}

// SaveFencedCheckpoint implements event.LeaseStore: one statement that
// share-locks the lease row while it is in force and saves the position
// only then, so a takeover waits for the save to commit.
func (s *CheckpointStore) SaveFencedCheckpoint(ctx context.Context, l event.Lease, pos factum.Position) error {
	if err := sqlstore.CheckFenced(l, pos); err != nil {
		return err
	}
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
	if err != nil {
		return fmt.Errorf("postgres: save checkpoint of %s at %s: %w", l.Group, pos, err)
	}
	if !held {
		return event.ErrLeaseLost
	}
	return nil
}
