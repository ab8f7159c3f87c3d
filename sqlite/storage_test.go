package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/sqlite"
)

type tally struct{ N int }
type bump struct{ N int }
type bumped struct{ N int }

func tallyType(bc string) *aggregate.Definition[tally] {
	return aggregate.New[tally](bc, "tally",
		aggregate.Source(func(s *tally, e bumped) { s.N += e.N }),
		aggregate.Handle(func(_ context.Context, _ tally, c bump) ([]any, error) { return []any{bumped(c)}, nil }, aggregate.AllowCreate()))
}

// One DB serves the stores of several contexts, the same store to every
// caller; Close closes them.
func TestTheDBIsTheStorageOfManyContexts(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "factum.db"))
	if err != nil {
		t.Fatal(err)
	}
	a1, err := db.EventStore(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := db.EventStore(ctx, "alpha")
	b, _ := db.EventStore(ctx, "beta")
	if a1 != a2 || a1 == b {
		t.Fatal("EventStore is not one store per context")
	}
	s1, _ := db.SnapshotStore(ctx, "alpha")
	s2, _ := db.SnapshotStore(ctx, "alpha")
	c1, _ := db.CheckpointStore(ctx, "alpha")
	c2, _ := db.CheckpointStore(ctx, "alpha")
	p1, _ := db.PrepareBackend(ctx)
	p2, _ := db.PrepareBackend(ctx)
	i1, _ := db.IdempotencyStore(ctx)
	i2, _ := db.IdempotencyStore(ctx)
	if s1 != s2 || c1 != c2 || p1 != p2 || i1 != i2 {
		t.Fatal("a store is made twice")
	}
	if _, err := db.EventStore(ctx, "not a name"); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("an invalid context: %v, want IllegalArgument", err)
	}
	for _, bc := range []string{"alpha", "beta"} {
		eng, err := engine.New(engine.Config{Storage: db}, tallyType(bc))
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Start(ctx); err != nil {
			t.Fatal(err)
		}
		def := tallyType(bc)
		if _, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(def.ID("t1"), bump{N: 2}), command.Wait(factum.StageSnapshot)); err != nil {
			t.Fatalf("%s: %v", bc, err)
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := eng.Shutdown(sctx); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	streams, err := a1.Load(ctx, tallyType("alpha").ID("t1"), 1, 1)
	if err != nil || len(streams) != 1 {
		t.Fatalf("the engine's stream is not in the DB's store: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a1.Append(ctx, &streams[0]); !errors.Is(err, sqlite.ErrEventStoreClosed) {
		t.Fatalf("Append after DB.Close: %v, want ErrEventStoreClosed", err)
	}
	if _, err := db.EventStore(ctx, "gamma"); err == nil {
		t.Fatal("EventStore after Close succeeded")
	}
}

func TestOpenTakesAtMostOneOptions(t *testing.T) {
	_, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), sqlite.Options{}, sqlite.Options{})
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("Open with two Options: %v, want IllegalArgument", err)
	}
}
