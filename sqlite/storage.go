package sqlite

import "github.com/factum-go/factum/internal/memo"

// storage is the storage handle a DB embeds: its methods EventStore,
// SnapshotStore and CheckpointStore (per bounded context), PrepareBackend
// and IdempotencyStore return each store, made with its default options
// and migrated on first use, the same store to every caller, closed by
// DB.Close. Pass the DB whole to engine.Config's Storage. Components that
// need other options are built with the New… constructors instead, and
// closed by their owner.
type storage = memo.Stores

// openers makes the DB's stores for its storage handle.
func (d *DB) openers() memo.Openers {
	return memo.OpenersOf(d, NewEventStore, NewSnapshotStore, NewCheckpointStore, NewPrepareBackend, NewIdempotencyStore)
}
