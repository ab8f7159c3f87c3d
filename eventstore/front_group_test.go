package eventstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoretest"
	"github.com/factum-go/factum/internal/built"
)

func builtGroup(id factum.AggregateID, n int) []built.Stream {
	bs := make([]built.Stream, n)
	for i := range bs {
		s := validStream(id, `{}`)
		s.Version = i + 1
		bs[i] = built.Mark(s)
	}
	return bs
}

// A front end over a backend without a group append refuses every group
// (built.GroupOf says it serves none), and nothing of it reaches the log.
func TestGroupWithoutAGroupBackendRefused(t *testing.T) {
	plain, err := eventstore.New(eventstoretest.Plain(eventstore.NewMemory().Backend()), eventstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1")
	if err := plain.AppendBuiltGroup(context.Background(), builtGroup(id, 2)); !errors.Is(err, factum.ErrIllegalState) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("a group through a front end without a group append: %v, want IllegalState, unsupported", err)
	}
	if page, err := plain.ReadLog(context.Background(), factum.Position{}, 10); err != nil || len(page) != 0 {
		t.Fatalf("the refused group reached the log: %v, %v", page, err)
	}
}

// A front end serving one bounded context refuses a group of another, of
// one stream or several, before its backend sees it.
func TestGroupOfAnotherContext(t *testing.T) {
	f, err := eventstore.New(eventstore.NewMemory().Backend(), eventstore.Config{Context: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	id := factum.NamedAggregate{Context: "billing", Aggregate: "invoice"}.WithID("i-1")
	for _, n := range []int{1, 3} {
		if err := f.AppendBuiltGroup(context.Background(), builtGroup(id, n)); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Fatalf("a group of %d of another context: %v, want IllegalArgument", n, err)
		}
	}
	if page, err := f.ReadLog(context.Background(), factum.Position{}, 10); err != nil || len(page) != 0 {
		t.Fatalf("the refused group reached the log: %v, %v", page, err)
	}
}
