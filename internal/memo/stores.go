package memo

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/snapshot"
)

// Openers make a backend's stores with their default options: per bounded
// context the event, snapshot and checkpoint stores, and the backend's one
// prepare-key backend and idempotency-key store.
type Openers struct {
	Events      func(ctx context.Context, boundedContext string) (eventstore.Store, error)
	Snapshots   func(ctx context.Context, boundedContext string) (snapshot.QueryStore, error)
	Checkpoints func(ctx context.Context, boundedContext string) (event.CheckpointStore, error)
	Prepare     func(ctx context.Context) (prepare.Backend, error)
	Idempotency func(ctx context.Context) (idempotency.Store, error)
}

// Stores is a storage handle over Openers: each store is opened on first
// use, the same store is returned to every caller, and Close closes them
// all, the last opened first. Backends embed it, so that memory, SQLite and
// PostgreSQL share one implementation of the handle's methods. It is safe
// for concurrent use.
type Stores struct {
	open Openers
	set  Set[storeKey]
}

// storeKey names one store: its kind and bounded context.
type storeKey struct{ kind, context string }

// NewStores returns the handle over open; every opener is required.
func NewStores(open Openers) *Stores { return &Stores{open: open} }

// errNotOpened is the error of a handle that was never made by its
// constructor (a zero value): the methods answer it instead of panicking.
var errNotOpened = factum.IllegalState("storage: not opened: make it with its package's New or Open")

// EventStore returns the event store of boundedContext.
func (s *Stores) EventStore(ctx context.Context, boundedContext string) (eventstore.Store, error) {
	if s == nil {
		return nil, errNotOpened
	}
	return contextStore(ctx, s, "events", boundedContext, s.open.Events)
}

// SnapshotStore returns the snapshot store of boundedContext, which
// answers queries.
func (s *Stores) SnapshotStore(ctx context.Context, boundedContext string) (snapshot.QueryStore, error) {
	if s == nil {
		return nil, errNotOpened
	}
	return contextStore(ctx, s, "snapshots", boundedContext, s.open.Snapshots)
}

// CheckpointStore returns the consumer-group checkpoints of
// boundedContext.
func (s *Stores) CheckpointStore(ctx context.Context, boundedContext string) (event.CheckpointStore, error) {
	if s == nil {
		return nil, errNotOpened
	}
	return contextStore(ctx, s, "checkpoints", boundedContext, s.open.Checkpoints)
}

// contextStore returns the store of kind of boundedContext, opened by
// open on first use.
func contextStore[T any](ctx context.Context, s *Stores, kind, boundedContext string, open func(context.Context, string) (T, error)) (T, error) {
	if err := factum.ValidateName("context", boundedContext); err != nil {
		var zero T
		return zero, err
	}
	return Get(ctx, &s.set, storeKey{kind, boundedContext}, func() (T, error) { return open(ctx, boundedContext) })
}

// PrepareBackend returns the prepare-key backend (unique keys such as
// usernames, shared by every context).
func (s *Stores) PrepareBackend(ctx context.Context) (prepare.Backend, error) {
	if s == nil {
		return nil, errNotOpened
	}
	return Get(ctx, &s.set, storeKey{kind: "prepare"}, func() (prepare.Backend, error) { return s.open.Prepare(ctx) })
}

// IdempotencyStore returns the idempotency-key store.
func (s *Stores) IdempotencyStore(ctx context.Context) (idempotency.Store, error) {
	if s == nil {
		return nil, errNotOpened
	}
	return Get(ctx, &s.set, storeKey{kind: "idempotency"}, func() (idempotency.Store, error) { return s.open.Idempotency(ctx) })
}

// Close closes the stores s opened, the last first; later calls of its
// methods fail with an IllegalState error wrapping factum.ErrClosed. A
// second call, or one on a nil handle, does nothing. It is a function, not
// a method, so that the handles embedding Stores do not export it beside
// their own Close.
func Close(s *Stores) error {
	if s == nil {
		return nil
	}
	return s.set.Close()
}
