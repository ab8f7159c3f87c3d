package memory_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/memory"
)

func TestOneStorePerContextUntilClose(t *testing.T) {
	ctx := context.Background()
	db := memory.New()
	a1, _ := db.EventStore(ctx, "alpha")
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
	i1, err := db.IdempotencyStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i2, _ := db.IdempotencyStore(ctx)
	if s1 != s2 || c1 != c2 || p1 != p2 || i1 != i2 {
		t.Fatal("a store is made twice")
	}
	for _, bad := range []string{"", "not a name"} {
		if _, err := db.CheckpointStore(ctx, bad); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("context %q: %v, want IllegalArgument", bad, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EventStore(ctx, "alpha"); err == nil {
		t.Fatal("EventStore after Close succeeded")
	}
}
