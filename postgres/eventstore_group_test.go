package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"

	"github.com/factum-go/factum/internal/built"
)

// The executor finds the store's group append (built.GroupOf).
func TestEventStoreAppendsGroups(t *testing.T) {
	st := newTestEventStore(t, newTestDB(t, 2), "kit", EventStoreOptions{})
	if built.GroupOf(st) == nil {
		t.Fatal("the store does not append groups")
	}
}

// A group appended after Close is refused, and nothing is stored.
func TestEventStoreGroupAfterClose(t *testing.T) {
	db := newTestDB(t, 2)
	st, err := NewEventStore(context.Background(), db, "shop", EventStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	id := shopCart.WithID("c-1")
	ss := []*factum.EventStream{testStream(id, 1, "r-1"), testStream(id, 2, "r-2")}
	if err := built.GroupOf(st).AppendBuiltGroup(context.Background(), []built.Stream{built.Mark(ss[0]), built.Mark(ss[1])}); !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("group after Close: %v, want ErrClosed", err)
	}
	if got, err := st.Load(context.Background(), id, 1, 10); err != nil || len(got) != 0 {
		t.Fatalf("after the refused group: %v, %v", got, err)
	}
}
