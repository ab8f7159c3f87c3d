package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/memory"
	"github.com/factum-go/factum/snapshot"
)

// refusingStorage cannot serve one kind of store.
type refusingStorage struct {
	*memory.Storage
	refuse string
}

var errRefused = errors.New("this storage cannot serve the context")

func (s refusingStorage) EventStore(ctx context.Context, bc string) (eventstore.Store, error) {
	if s.refuse == "events" {
		return nil, errRefused
	}
	return s.Storage.EventStore(ctx, bc)
}

func (s refusingStorage) SnapshotStore(ctx context.Context, bc string) (snapshot.QueryStore, error) {
	if s.refuse == "snapshots" {
		return nil, errRefused
	}
	return s.Storage.SnapshotStore(ctx, bc)
}

func (s refusingStorage) CheckpointStore(ctx context.Context, bc string) (event.CheckpointStore, error) {
	if s.refuse == "checkpoints" {
		return nil, errRefused
	}
	return s.Storage.CheckpointStore(ctx, bc)
}

func TestAStorageThatCannotServeTheContextFailsNew(t *testing.T) {
	for _, kind := range []string{"events", "snapshots", "checkpoints"} {
		t.Run(kind, func(t *testing.T) {
			_, err := engine.New(engine.Config{Storage: refusingStorage{memory.New(), kind}}, counterType(nil))
			if !errors.Is(err, errRefused) {
				t.Fatalf("New = %v, want the storage's refusal", err)
			}
		})
	}
}

func TestTypesOfTwoContextsOnOneStorageAreIllegal(t *testing.T) {
	other := aggregate.New[Counter]("other", "counter",
		aggregate.Source(func(c *Counter, e Added) { c.Total += e.N }),
		aggregate.Handle(func(_ context.Context, _ Counter, a Add) ([]any, error) { return []any{Added(a)}, nil }, aggregate.AllowCreate()))
	_, err := engine.New(engine.Config{Storage: memory.New()}, counterType(nil), other)
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("New = %v, want IllegalArgument", err)
	}
	if _, err := engine.New(engine.Config{}, counterType(nil)); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("New without storage = %v, want IllegalArgument", err)
	}
}

// The engine takes the context's stores from the storage, and an explicit
// store overrides its kind.
func TestTheEngineUsesTheStoragesStores(t *testing.T) {
	ctx := t.Context()
	db := memory.New()
	t.Cleanup(func() { _ = db.Close() })
	own := snapshot.NewMemory()
	rt, err := engine.New(engine.Config{Storage: db, SnapshotStore: own}, counterType(nil))
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Run(t, rt)
	id := factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "test", Aggregate: "counter"}, ID: "c1"}
	if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 3}), command.Wait(factum.StageSnapshot)); err != nil {
		t.Fatal(err)
	}
	events, _ := db.EventStore(ctx, "test")
	if streams, err := events.Load(ctx, id, 1, eventstore.MaxVersion); err != nil || len(streams) != 1 {
		t.Fatalf("the storage's event store holds %d streams (%v), want 1", len(streams), err)
	}
	if rt.Snapshots() != snapshot.Store(own) {
		t.Fatal("Snapshots is not the explicit SnapshotStore")
	}
	if _, err := own.Load(ctx, id); err != nil {
		t.Fatalf("the explicit snapshot store has no snapshot: %v", err)
	}
	snaps, _ := db.SnapshotStore(ctx, "test")
	if _, err := snaps.Load(ctx, id); !errors.Is(err, factum.ErrNotFound) {
		t.Fatalf("the storage's snapshot store was used despite the override: %v", err)
	}
}
