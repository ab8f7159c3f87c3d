package postgres

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
)

// CheckpointStore is the PostgreSQL event.CheckpointStore of the consumer
// groups reading one bounded context's log. Positions live in the table
// factum_<context>_checkpoints, one row per group keyed by the group's
// factum.Function (context, processor, name).
//
// A save is one statement, INSERT … ON CONFLICT DO UPDATE … WHERE the
// stored (tx, seq) is below the new one: the row lock the upsert takes
// orders concurrent saves of one group, and each compares against the row
// as the previous one left it, so a checkpoint never moves backwards.
// Position.Tx is the event store's transaction ID (see EventStore), kept
// as a bigint.
//
// It is also the event.LeaseStore of those groups (Acquire, Renew,
// Release, SaveFencedCheckpoint), their leases in the table
// factum_<context>_leases: each call is one statement that judges expiry
// by clock_timestamp() once it holds the lease's row, and a fenced save
// share-locks that row while the lease is in force and saves the position
// only then, so that a takeover waits for the save to commit.
//
// A CheckpointStore is safe for concurrent use.
type CheckpointStore struct {
	checkpointStore // the shared implementation
	leases          // the shared lease methods, over the store's leaseStmts
	db              *DB
	context         string
}

// NewCheckpointStore returns the checkpoint store of the consumers of
// boundedContext's log in db, applying its schema migrations (component
// "checkpoint:<context>", table factum_<context>_checkpoints) if they are
// not applied yet. Context names longer than 44 bytes are refused, as
// PostgreSQL would truncate the table names.
func NewCheckpointStore(ctx context.Context, db *DB, boundedContext string) (*CheckpointStore, error) {
	ex := db.executor()
	core, err := sqlstore.NewCheckpoints(ctx, &dialect, db.migrator(), migrations, boundedContext, ex, nil)
	if err != nil {
		return nil, err
	}
	s := &CheckpointStore{checkpointStore: core, db: db, context: boundedContext}
	s.leases = sqlstore.NewLeases(&dialect, (*leaseStmts)(s))
	return s, nil
}

// validTableContext checks a context name for the tables named after it:
// factum_<context>_checkpoints must fit PostgreSQL's 63-byte identifiers,
// which the server would otherwise truncate silently. The bound is the
// event store's (esMaxContextLen), so a context serves all components.
func validTableContext(boundedContext string) error {
	if err := factum.ValidateName("context", boundedContext); err != nil {
		return err
	}
	if len(boundedContext) > esMaxContextLen {
		return factum.IllegalArgument(fmt.Sprintf("postgres: context name %q is longer than %d bytes, too long for table names", boundedContext, esMaxContextLen))
	}
	return nil
}

// Context returns the bounded context whose consumers the store serves.
func (s *CheckpointStore) Context() string { return s.context }
