package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore/eventstoretest"
)

// newTestDB opens a database in a temporary directory, closed at cleanup.
func newTestDB(t testing.TB, opts Options) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "events.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newTestEventStore(t testing.TB, db *DB, boundedContext string, opts EventStoreOptions) *EventStore {
	t.Helper()
	st, err := NewEventStore(context.Background(), db, boundedContext, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close event store: %v", err)
		}
	})
	return st
}

// testStream builds a valid one-event stream.
func testStream(id factum.AggregateID, version int, requestID string) *factum.EventStream {
	return &factum.EventStream{
		ID: factum.NewID(), AggregateID: id, Version: version,
		CommandID: factum.NewID(), RequestID: requestID,
		CreateTime: time.Now(),
		Events: []factum.DomainEvent{{
			ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true,
			Body: []byte(`{"sku":"sku-1","qty":2}`),
		}},
	}
}

var esShopCart = factum.NamedAggregate{Context: "shop", Aggregate: "cart"}

func TestNewEventStoreRefusesBadInput(t *testing.T) {
	db := newTestDB(t, Options{})
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		context string
		opts    EventStoreOptions
	}{
		{"negative batch", "shop", EventStoreOptions{MaxBatch: -1}},
		{"negative poll", "shop", EventStoreOptions{PollInterval: -time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewEventStore(ctx, db, c.context, c.opts)
			if !errors.Is(err, factum.ErrIllegalArgument) {
				t.Fatalf("got %v, want IllegalArgument", err)
			}
		})
	}
}

// Concurrent appends of every outcome at once, coalesced into shared
// transactions: each caller gets its own outcome, and only the appends that
// should go in are stored.
func TestEventStoreCoalescedMixedOutcomes(t *testing.T) {
	st := newTestEventStore(t, newTestDB(t, Options{}), "kit", EventStoreOptions{})
	var before int64
	n := eventstoretest.AppendMixedOutcomes(t, st, func() { before = st.stats.Batches.Load() })
	if batches := st.stats.Batches.Load() - before; batches >= int64(n) {
		t.Errorf("%d concurrent appends took %d transactions: nothing was coalesced", n, batches)
	}
}
