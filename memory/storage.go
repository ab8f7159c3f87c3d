package memory

import (
	"context"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/memo"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/snapshot"
)

// Storage holds the in-memory stores: per bounded context an event store,
// a snapshot store (with queries) and checkpoints; one prepare backend
// (judging expiry by time.Now) and one idempotency store (default policy).
// Its methods EventStore, SnapshotStore, CheckpointStore, PrepareBackend
// and IdempotencyStore make each store on first use and return the same
// store to every caller; Close releases them. It is safe for concurrent
// use.
type Storage struct {
	*stores
}

// stores is the handle's shared implementation, embedded under an
// unexported name.
type stores = memo.Stores

// New returns an empty storage.
func New() *Storage {
	return &Storage{memo.NewStores(memo.Openers{
		Events: func(context.Context, string) (eventstore.Store, error) { return eventstore.NewMemory(), nil },
		Snapshots: func(context.Context, string) (snapshot.QueryStore, error) {
			return snapshot.NewMemory(), nil
		},
		Checkpoints: func(context.Context, string) (event.CheckpointStore, error) {
			return event.NewMemoryCheckpoints(), nil
		},
		Prepare: func(context.Context) (prepare.Backend, error) { return prepare.NewMemory(prepare.MemoryConfig{}), nil },
		Idempotency: func(context.Context) (idempotency.Store, error) {
			return idempotency.NewMemory(idempotency.MemoryConfig{})
		},
	})}
}

// Close releases the stores; later calls fail with an IllegalState error
// wrapping factum.ErrClosed.
func (s *Storage) Close() error { return memo.Close(s.stores) }
