package postgres

import (
	"context"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/memo"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/snapshot"
)

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
	return memo.Openers{
		Events: func(ctx context.Context, bc string) (eventstore.Store, error) {
			return NewEventStore(ctx, d, bc, EventStoreOptions{})
		},
		Snapshots: func(ctx context.Context, bc string) (snapshot.QueryStore, error) {
			return NewSnapshotStore(ctx, d, bc)
		},
		Checkpoints: func(ctx context.Context, bc string) (event.CheckpointStore, error) {
			return NewCheckpointStore(ctx, d, bc)
		},
		Prepare: func(ctx context.Context) (prepare.Backend, error) { return NewPrepareBackend(ctx, d, PrepareOptions{}) },
		Idempotency: func(ctx context.Context) (idempotency.Store, error) {
			return NewIdempotencyStore(ctx, d, IdempotencyOptions{})
		},
	}
}
