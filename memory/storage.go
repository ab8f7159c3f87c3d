package memory

import (
	"context"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/memo"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/snapshot"
)

// Storage holds the in-memory stores: per bounded context an event store,
// a snapshot store (with queries) and checkpoints; one prepare backend and
// one idempotency store. Each is made on first use and is the same for
// every caller. It is safe for concurrent use.
type Storage struct {
	stores memo.Set[storeKey]
}

type storeKey struct{ kind, context string }

// New returns an empty storage.
func New() *Storage { return &Storage{} }

// EventStore returns the event store of boundedContext.
func (s *Storage) EventStore(_ context.Context, boundedContext string) (eventstore.Store, error) {
	if err := factum.ValidateName("context", boundedContext); err != nil {
		return nil, err
	}
	return memo.Get(&s.stores, storeKey{"events", boundedContext}, func() (*eventstore.Memory, error) {
		return eventstore.NewMemory(), nil
	})
}

// SnapshotStore returns the snapshot store of boundedContext.
func (s *Storage) SnapshotStore(_ context.Context, boundedContext string) (snapshot.QueryStore, error) {
	if err := factum.ValidateName("context", boundedContext); err != nil {
		return nil, err
	}
	return memo.Get(&s.stores, storeKey{"snapshots", boundedContext}, func() (*snapshot.Memory, error) {
		return snapshot.NewMemory(), nil
	})
}

// CheckpointStore returns the consumer-group checkpoints of
// boundedContext.
func (s *Storage) CheckpointStore(_ context.Context, boundedContext string) (event.CheckpointStore, error) {
	if err := factum.ValidateName("context", boundedContext); err != nil {
		return nil, err
	}
	return memo.Get(&s.stores, storeKey{"checkpoints", boundedContext}, func() (*event.MemoryCheckpoints, error) {
		return event.NewMemoryCheckpoints(), nil
	})
}

// PrepareBackend returns the prepare-key backend, judging expiry by
// time.Now.
func (s *Storage) PrepareBackend(context.Context) (prepare.Backend, error) {
	return memo.Get(&s.stores, storeKey{kind: "prepare"}, func() (prepare.Backend, error) {
		return prepare.NewMemory(time.Now), nil
	})
}

// IdempotencyStore returns the idempotency-key store, with the default
// policy.
func (s *Storage) IdempotencyStore(context.Context) (idempotency.Store, error) {
	return memo.Get(&s.stores, storeKey{kind: "idempotency"}, func() (idempotency.Store, error) {
		return idempotency.NewMemory(idempotency.MemoryOptions{})
	})
}

// Close releases the stores; later calls fail with an error.
func (s *Storage) Close() error { return s.stores.Close() }
