package storagetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/prepare"
)

// Storage is what the kit checks: the engine's stores per bounded context,
// and the backend's prepare-key backend and idempotency-key store.
type Storage interface {
	engine.Storage
	PrepareBackend(ctx context.Context) (prepare.Backend, error)
	IdempotencyStore(ctx context.Context) (idempotency.Store, error)
}

// Open returns a fresh, empty handle and the function that closes it.
type Open func(t *testing.T) (s Storage, close func())

// Run runs the contract against handles from open.
func Run(t *testing.T, open Open) {
	t.Helper()
	t.Run("OneStorePerContext", func(t *testing.T) { oneStorePerContext(t, open) })
	t.Run("InvalidContextRefused", func(t *testing.T) { invalidContextRefused(t, open) })
	t.Run("EnginesOfTwoContexts", func(t *testing.T) { enginesOfTwoContexts(t, open) })
	t.Run("ClosedHandleRefuses", func(t *testing.T) { closedHandleRefuses(t, open) })
}

func oneStorePerContext(t *testing.T, open Open) {
	ctx := t.Context()
	s, closeS := open(t)
	t.Cleanup(closeS)
	same := func(kind string, get func(bc string) (any, error)) {
		t.Helper()
		a1, err := get("alpha")
		if err != nil {
			t.Fatalf("%s of alpha: %v", kind, err)
		}
		a2, err := get("alpha")
		if err != nil || a1 != a2 {
			t.Fatalf("%s: a second call gave another store (%v)", kind, err)
		}
		if b, err := get("beta"); err != nil || (kind != "prepare" && kind != "idempotency" && b == a1) {
			t.Fatalf("%s: beta's store is alpha's (%v)", kind, err)
		}
	}
	same("events", func(bc string) (any, error) { return s.EventStore(ctx, bc) })
	same("snapshots", func(bc string) (any, error) { return s.SnapshotStore(ctx, bc) })
	same("checkpoints", func(bc string) (any, error) { return s.CheckpointStore(ctx, bc) })
	same("prepare", func(string) (any, error) { return s.PrepareBackend(ctx) })
	same("idempotency", func(string) (any, error) { return s.IdempotencyStore(ctx) })
}

func invalidContextRefused(t *testing.T, open Open) {
	ctx := t.Context()
	s, closeS := open(t)
	t.Cleanup(closeS)
	for _, bad := range []string{"", "not a name", `sh"op`} {
		if _, err := s.EventStore(ctx, bad); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Errorf("EventStore(%q): %v, want IllegalArgument", bad, err)
		}
		if _, err := s.CheckpointStore(ctx, bad); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Errorf("CheckpointStore(%q): %v, want IllegalArgument", bad, err)
		}
	}
}

type tally struct{ N int }
type bump struct{ N int }
type bumped struct{ N int }

func tallyType(bc string) *aggregate.Definition[tally] {
	return aggregate.New[tally](bc, "tally",
		aggregate.Source(func(s *tally, e bumped) { s.N += e.N }),
		aggregate.Handle(func(_ context.Context, _ tally, c bump) ([]any, error) { return []any{bumped(c)}, nil }, aggregate.AllowCreate()))
}

// enginesOfTwoContexts runs an engine per context on one handle: each
// context's stream lands in its own event store and snapshot store.
func enginesOfTwoContexts(t *testing.T, open Open) {
	ctx := t.Context()
	s, closeS := open(t)
	t.Cleanup(closeS)
	for i, bc := range []string{"alpha", "beta"} {
		def := tallyType(bc)
		eng, err := engine.New(engine.Config{Storage: s}, def)
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(def.ID("t1"), bump{N: i + 1}), command.Wait(factum.StageSnapshot)); err != nil {
			t.Fatalf("%s: %v", bc, err)
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = eng.Shutdown(sctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		es, err := s.EventStore(ctx, bc)
		if err != nil {
			t.Fatal(err)
		}
		streams, err := es.Load(ctx, def.ID("t1"), 1, 10)
		if err != nil || len(streams) != 1 {
			t.Fatalf("%s: the engine's stream is not in the handle's store: %d streams, %v", bc, len(streams), err)
		}
		snaps, err := s.SnapshotStore(ctx, bc)
		if err != nil {
			t.Fatal(err)
		}
		if snap, err := snaps.Load(ctx, def.ID("t1")); err != nil || snap.Version != 1 {
			t.Fatalf("%s: snapshot %+v, %v; want version 1", bc, snap, err)
		}
	}
}

func closedHandleRefuses(t *testing.T, open Open) {
	ctx := t.Context()
	s, closeS := open(t)
	if _, err := s.EventStore(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	closeS()
	if _, err := s.EventStore(ctx, "alpha"); !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("EventStore after Close: %v, want an error wrapping factum.ErrClosed", err)
	}
	if _, err := s.IdempotencyStore(ctx); !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("IdempotencyStore after Close: %v, want an error wrapping factum.ErrClosed", err)
	}
}
