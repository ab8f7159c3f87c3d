package command_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
)

// Check-and-add is atomic: of 32 concurrent checks of one new request,
// exactly one finds it unseen. The test counts store lookups, which only a
// "maybe seen" makes.
func TestCheckerAtomic(t *testing.T) {
	for round := range 20 {
		store := &countingStore{Store: eventstore.NewMemory()}
		c, err := command.NewRequestChecker(store, command.CheckerConfig{Capacity: 1000})
		if err != nil {
			t.Fatal(err)
		}
		id := factum.NamedAggregate{Context: "c", Aggregate: "a"}.WithID("x")
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 32 {
			wg.Go(func() {
				<-start
				if _, dup, err := c.Check(context.Background(), id, fmt.Sprint("req-", round)); err != nil || dup {
					t.Errorf("dup=%v err=%v for a request never appended", dup, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if n := store.lookups.Load(); n != 31 {
			t.Fatalf("round %d: %d store lookups, want 31 (exactly one check saw it unseen)", round, n)
		}
	}
}

// A request appended earlier is reported with its stream.
func TestCheckerFindsAppended(t *testing.T) {
	store := eventstore.NewMemory()
	c, _ := command.NewRequestChecker(store, command.CheckerConfig{Capacity: 4})
	id := factum.NamedAggregate{Context: "c", Aggregate: "a"}.WithID("y")
	s := &factum.EventStream{ID: factum.NewID(), AggregateID: id, Version: 1, CommandID: factum.NewID(), RequestID: "r1",
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "e", Sequence: 1, IsLast: true, Body: []byte(`{}`)}}}
	if _, dup, _ := c.Check(context.Background(), id, "r1"); dup {
		t.Fatal("unseen request reported")
	}
	if err := store.Append(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	got, dup, err := c.Check(context.Background(), id, "r1")
	if err != nil || !dup || got.Version != 1 {
		t.Fatalf("%+v %v %v", got, dup, err)
	}
}

type countingStore struct {
	eventstore.Store
	lookups atomic.Int64
}

func (s *countingStore) Lookup(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, error) {
	s.lookups.Add(1)
	return s.Store.Lookup(ctx, id, requestID)
}

// At capacity the filters keep their false-positive rate: fresh requests
// rarely cost a store lookup.
func TestCheckerFalsePositives(t *testing.T) {
	const n = 200_000
	store := &countingStore{Store: eventstore.NewMemory()}
	c, err := command.NewRequestChecker(store, command.CheckerConfig{Capacity: n, FalsePositiveRate: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	id := factum.NamedAggregate{Context: "c", Aggregate: "a"}.WithID("z")
	for i := range n {
		if _, _, err := c.Check(context.Background(), id, fmt.Sprint("fresh-", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Expected about n × 1e-4 / 2 = 10 (the rate is reached only at the end).
	if got := store.lookups.Load(); got > 60 {
		t.Fatalf("%d store lookups for %d fresh requests: the filter's rate is above 1e-4", got, n)
	}
}
