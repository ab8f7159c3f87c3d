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

// A DB is the storage of any number of bounded contexts: the methods below
// return each context's stores, made with their default options and
// migrated on first use, the same store to every caller, and closed by
// DB.Close. Pass the DB whole to engine.Config's Storage. Components that
// need other options are built with the New… constructors instead, and
// closed by their owner.

// storeKey names one memoised store: its kind and bounded context.
type storeKey struct{ kind, context string }

// EventStore returns the event store of boundedContext.
func (d *DB) EventStore(ctx context.Context, boundedContext string) (eventstore.Store, error) {
	return memo.Get(&d.stores, storeKey{"events", boundedContext}, func() (*EventStore, error) {
		return NewEventStore(ctx, d, boundedContext, EventStoreOptions{})
	})
}

// SnapshotStore returns the snapshot store of boundedContext, which
// answers queries.
func (d *DB) SnapshotStore(ctx context.Context, boundedContext string) (snapshot.QueryStore, error) {
	return memo.Get(&d.stores, storeKey{"snapshots", boundedContext}, func() (*SnapshotStore, error) {
		return NewSnapshotStore(ctx, d, boundedContext)
	})
}

// CheckpointStore returns the consumer-group checkpoints of
// boundedContext.
func (d *DB) CheckpointStore(ctx context.Context, boundedContext string) (event.CheckpointStore, error) {
	return memo.Get(&d.stores, storeKey{"checkpoints", boundedContext}, func() (*CheckpointStore, error) {
		return NewCheckpointStore(ctx, d, boundedContext)
	})
}

// PrepareBackend returns the database's prepare-key backend (unique keys
// such as usernames, shared by every context).
func (d *DB) PrepareBackend(ctx context.Context) (prepare.Backend, error) {
	return memo.Get(&d.stores, storeKey{kind: "prepare"}, func() (*PrepareBackend, error) {
		return NewPrepareBackend(ctx, d, PrepareOptions{})
	})
}

// IdempotencyStore returns the database's idempotency-key store.
func (d *DB) IdempotencyStore(ctx context.Context) (idempotency.Store, error) {
	return memo.Get(&d.stores, storeKey{kind: "idempotency"}, func() (*IdempotencyStore, error) {
		return NewIdempotencyStore(ctx, d, IdempotencyOptions{})
	})
}
