package projection

import (
	"context"

	"github.com/factum-go/factum"
)

// Store is a read model's database: sqlite.ProjectionStore and
// postgres.ProjectionStore implement it.
type Store interface {
	// Begin starts a transaction that can write the read model, the
	// projections' checkpoints and their builds' state.
	Begin(ctx context.Context) (Txn, error)
	// State returns a projection's build state as last committed, without
	// a write transaction (the zero State when it has none).
	State(ctx context.Context, name string) (State, error)
	// Query runs a read-only query outside any write transaction and
	// returns at most limit rows, marking the result Truncated when
	// there were more.
	Query(ctx context.Context, limit int, query string, args ...any) (Result, error)
}

// Txn is a transaction of a Store: a Tx for the projection, plus the
// checkpoints and the builds' state, which it reads and writes in the
// same transaction.
type Txn interface {
	Tx
	// Checkpoint returns the group's saved position, or the zero Position,
	// and holds it until the transaction ends: a concurrent transaction
	// of another runner reads it only after this one committed or rolled
	// back (PostgreSQL locks the row; SQLite's write transactions run one
	// at a time), so two runners of a projection never apply one batch.
	Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error)
	// SaveCheckpoint records the group's position; a position before the
	// saved one is ignored. The store may queue its statement behind the
	// queued ones, to run at the next Flush or at the commit (its failure
	// there is no QueuedError).
	SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error
	// DeleteCheckpoint removes the group's checkpoint, for a rebuild.
	DeleteCheckpoint(ctx context.Context, group factum.Function) error
	// State returns the projection's build state and holds it until the
	// transaction ends (as Checkpoint holds a checkpoint).
	State(ctx context.Context, name string) (State, error)
	// SaveState records the projection's build state.
	SaveState(ctx context.Context, s State) error
	// MarkFailed records that the group passed the stream without its
	// writes (its failure was recorded), so a retry applies it once.
	MarkFailed(ctx context.Context, group factum.Function, streamID string) error
	// Unmark removes the group's mark of the stream and reports whether
	// there was one.
	Unmark(ctx context.Context, group factum.Function, streamID string) (bool, error)
	// DeleteMarks removes every mark of the group, for a reset or a
	// dropped build.
	DeleteMarks(ctx context.Context, group factum.Function) error
	// Queued returns how many statements the transaction has queued
	// (Tx.Queue) so far, run or not: the next one queued has that Index
	// in its QueuedError.
	Queued() int
	// Flush runs the statements queued and not yet run. A queued
	// statement's failure is a *QueuedError, and once one failed, the
	// transaction's Exec, QueryRow, Flush and Commit return it again.
	Flush(ctx context.Context) error
	// Failed returns the queued statement's failure the transaction has
	// recorded (a *QueuedError), or nil, and runs nothing: after a
	// function's own error the runner asks it whom to charge, where
	// running the queue in a transaction the error may have aborted would
	// charge an earlier, innocent stream.
	Failed() error
	// WithTables returns the transaction whose Table names the tables t
	// (the runner scopes each transaction to the build it writes).
	WithTables(t Tables) Txn
	// Commit runs the queued statements, as Flush does, then commits the
	// transaction; Rollback abandons it (after Commit it does nothing).
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Build identifies one build of a projection: its number (1, 2, …: the
// part of its tables' names and of its checkpoint group) and the schema
// version it was built with.
type Build struct {
	Number  int `json:"number"`
	Version int `json:"version"`
	// Tables are the build's physical table names, which a later
	// version (whose Schema may differ) drops.
	Tables []string `json:"tables,omitempty"`
}

// IsZero reports whether b is no build.
func (b Build) IsZero() bool { return b.Number == 0 }

// State is where a projection's builds stand in its store. The runner
// changes it only in transactions that also hold the checkpoints
// concerned, so a crash leaves either the old or the new build live.
type State struct {
	// Name is the projection's name.
	Name string `json:"name"`
	// Live is the build queries read; zero before the first.
	Live Build `json:"live"`
	// Next is the build being filled beside the live one; zero when none.
	Next Build `json:"next"`
	// Retired is a build replaced by a switch whose tables are yet to be
	// dropped; zero when none.
	Retired Build `json:"retired"`
	// Last is the highest build number given out.
	Last int `json:"last"`
}
