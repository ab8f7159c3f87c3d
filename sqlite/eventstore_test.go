package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore/eventstoretest"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

// newTestDB opens a database in a temporary directory, closed at cleanup.
func newTestDB(t testing.TB, opts Options) *DB {
	return sqlstoretest.Closed(Open(context.Background(), filepath.Join(t.TempDir(), "events.db"), opts))(t)
}

func newTestEventStore(t testing.TB, db *DB, boundedContext string, opts EventStoreOptions) *EventStore {
	return sqlstoretest.Closed(NewEventStore(context.Background(), db, boundedContext, opts))(t)
}

// testStream builds a valid one-event stream.
var testStream = sqlstoretest.Stream

var esShopCart = factum.NamedAggregate{Context: "shop", Aggregate: "cart"}

func TestNewEventStoreRefusesBadInput(t *testing.T) {
	db := newTestDB(t, Options{})
	ctx := context.Background()
	for _, opts := range []EventStoreOptions{{MaxBatch: -1}, {PollInterval: -time.Second}} {
		if _, err := NewEventStore(ctx, db, "shop", opts); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("options %+v: %v, want IllegalArgument", opts, err)
		}
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
