package prepare_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/prepare"
)

func TestEffects(t *testing.T) {
	ctx := context.Background()
	k, err := prepare.NewKey[string]("username", prepare.NewMemory(prepare.MemoryConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	held := func(key string) string {
		v, ok, err := k.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return ""
		}
		return v.Value
	}
	u1, u2 := prepare.Forever("u-1"), prepare.Forever("u-2")

	// Reserve: applied, then recognised as its own, taken for another.
	r := k.Reserve("alice", u1)
	if ok, err := r.Apply(ctx); !ok || err != nil {
		t.Fatalf("reserve: %v %v", ok, err)
	}
	if ok, err := k.Reserve("alice", u1).Apply(ctx); ok || err != nil {
		t.Fatalf("reserve again for the same owner: %v %v, want false, nil", ok, err)
	}
	if _, err := k.Reserve("alice", u2).Apply(ctx); !errors.Is(err, prepare.ErrTaken) || !errors.Is(err, factum.ErrIllegalState) {
		t.Fatalf("reserve for another owner: %v", err)
	}
	custom := factum.IllegalState("alice is taken")
	if _, err := k.Reserve("alice", u2).IfTaken(custom).Apply(ctx); err != custom {
		t.Fatalf("IfTaken: %v", err)
	}
	if err := r.Undo(ctx); err != nil || held("alice") != "" {
		t.Fatalf("undo reserve: %v, alice held by %q", err, held("alice"))
	}

	// Change: applied, recognised when already made, undone back.
	if _, err := k.Reserve("alice", u1).Apply(ctx); err != nil {
		t.Fatal(err)
	}
	c := k.Change("alice", u1, "dave", u1)
	if ok, err := c.Apply(ctx); !ok || err != nil || held("dave") != "u-1" || held("alice") != "" {
		t.Fatalf("change: %v %v", ok, err)
	}
	if ok, err := k.Change("alice", u1, "dave", u1).Apply(ctx); ok || err != nil {
		t.Fatalf("change made already: %v %v, want false, nil", ok, err)
	}
	if err := c.Undo(ctx); err != nil || held("alice") != "u-1" || held("dave") != "" {
		t.Fatalf("undo change: %v alice=%q dave=%q", err, held("alice"), held("dave"))
	}
	if _, err := k.Reserve("erin", u2).Apply(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Change("alice", u1, "erin", u1).Apply(ctx); !errors.Is(err, prepare.ErrTaken) {
		t.Fatalf("change to a taken key: %v", err)
	}
	if _, err := k.Change("bob", u1, "zed", u1).Apply(ctx); !errors.Is(err, prepare.ErrNotHeld) {
		t.Fatalf("change of a key not held: %v", err)
	}

	// Release: applied, recognised when released already, undone.
	rel := k.Release("alice", u1)
	if ok, err := rel.Apply(ctx); !ok || err != nil || held("alice") != "" {
		t.Fatalf("release: %v %v", ok, err)
	}
	if ok, err := k.Release("alice", u1).Apply(ctx); ok || err != nil {
		t.Fatalf("release again: %v %v", ok, err)
	}
	if err := rel.Undo(ctx); err != nil || held("alice") != "u-1" {
		t.Fatalf("undo release: %v alice=%q", err, held("alice"))
	}
}
