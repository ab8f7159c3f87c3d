package projection

import (
	"context"

	"github.com/factum-go/factum"
)

// Store is a read model's database: sqlite.ProjectionStore and
// postgres.ProjectionStore implement it.
type Store interface {
	// Begin starts a transaction that can write the read model and the
	// projections' checkpoints.
	Begin(ctx context.Context) (Txn, error)
}

// Txn is a transaction of a Store: a Tx for the projection, plus the
// checkpoints, which it reads and writes in the same transaction.
type Txn interface {
	Tx
	// Checkpoint returns the group's saved position, or the zero Position,
	// and holds it until the transaction ends: a concurrent transaction
	// of another runner reads it only after this one committed or rolled
	// back (PostgreSQL locks the row; SQLite's write transactions run one
	// at a time), so two runners of a projection never apply one batch.
	Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error)
	// SaveCheckpoint records the group's position; a position before the
	// saved one is ignored.
	SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error
	// DeleteCheckpoint removes the group's checkpoint, for a rebuild.
	DeleteCheckpoint(ctx context.Context, group factum.Function) error
	// Commit commits the transaction; Rollback abandons it (after Commit
	// it does nothing).
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}
