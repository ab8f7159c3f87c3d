package eventstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
)

func groupOf(id factum.AggregateID, from, n int) []built.Stream {
	bs := make([]built.Stream, n)
	for i := range bs {
		bs[i] = built.Mark(&factum.EventStream{ID: factum.NewID(), AggregateID: id, Version: from + i, CommandID: factum.NewID(),
			RequestID: fmt.Sprintf("r-%d", from+i),
			Events:    []factum.DomainEvent{{ID: factum.NewID(), Name: "opened", Sequence: 1, IsLast: true, Body: []byte(`{}`)}}})
	}
	return bs
}

// A group append counts as one append through the front end: it wakes
// the waiters that took their wake-up before it, once, and counts once for
// the tail; a refused group does neither.
func TestGroupWakesOnce(t *testing.T) {
	m := NewMemory()
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1")
	woken := m.woken.wait()
	before := m.tail.appends.Load()
	if err := m.AppendBuiltGroup(context.Background(), groupOf(id, 1, 3)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	default:
		t.Fatal("the group append did not wake the waiter")
	}
	if got := m.tail.appends.Load() - before; got != 1 {
		t.Fatalf("the group append counted %d appends for the tail, want 1", got)
	}
	woken = m.woken.wait()
	if err := m.AppendBuiltGroup(context.Background(), groupOf(id, 1, 2)); !errors.Is(err, factum.ErrDuplicateRequestID) {
		t.Fatalf("the group again: %v, want DuplicateRequestId", err)
	}
	select {
	case <-woken:
		t.Fatal("a refused group woke the waiter")
	default:
	}
	if got := m.tail.appends.Load() - before; got != 1 {
		t.Fatalf("a refused group counted for the tail: %d appends, want 1", got)
	}
}
