package command_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
)

// leakyStore answers Lookup whatever tenant the caller names, as a store
// that ignored the contract would: the checker must still never answer a
// request with another tenant's stream.
type leakyStore struct{ *eventstore.Memory }

func (s leakyStore) Lookup(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, error) {
	streams, err := s.Memory.Load(ctx, id, 1, eventstore.MaxVersion)
	if err != nil {
		return factum.EventStream{}, err
	}
	for _, st := range streams {
		if st.RequestID == requestID {
			return st, nil
		}
	}
	return factum.EventStream{}, eventstore.NotFoundRequest(id, requestID)
}

func TestCheckerNeverAnswersAnotherTenant(t *testing.T) {
	mem := eventstore.NewMemory()
	named := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	owner := named.WithID("c-42").WithTenant("acme")
	s := &factum.EventStream{
		ID: factum.NewID(), AggregateID: owner, Version: 1, CommandID: factum.NewID(), RequestID: "req-shared",
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: []byte(`{}`)}},
	}
	if err := mem.Append(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	for _, store := range []eventstore.Store{mem, leakyStore{mem}} {
		c, err := command.NewRequestChecker(store, command.CheckerConfig{Capacity: 1000})
		if err != nil {
			t.Fatal(err)
		}
		// Seen twice from evil: the second check asks the store.
		for i := range 2 {
			if _, dup, err := c.Check(context.Background(), owner.WithTenant("evil"), "req-shared"); err != nil || dup {
				t.Fatalf("%T check %d from another tenant: duplicate=%v err=%v", store, i, dup, err)
			}
		}
		if got, dup, err := c.Check(context.Background(), owner, "req-shared"); err != nil || !dup || got.CommandID != s.CommandID {
			t.Fatalf("%T check from the owner: %v %v", store, dup, err)
		}
	}
}
