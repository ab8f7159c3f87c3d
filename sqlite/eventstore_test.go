package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
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

func TestEventStoreContract(t *testing.T) {
	for _, c := range []struct {
		name string
		opts EventStoreOptions
	}{
		{"coalescing", EventStoreOptions{}},
		{"one append per transaction", EventStoreOptions{MaxBatch: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			eventstoretest.Run(t, func(t *testing.T) eventstore.Store {
				return newTestEventStore(t, newTestDB(t, Options{Synchronous: "NORMAL"}), "kit", c.opts)
			})
		})
	}
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

func TestEventStoreRefusesOtherContexts(t *testing.T) {
	st := newTestEventStore(t, newTestDB(t, Options{}), "shop", EventStoreOptions{})
	ctx := context.Background()
	other := factum.NamedAggregate{Context: "billing", Aggregate: "invoice"}
	id := other.WithID("i-1")
	checks := map[string]error{
		"Append": st.Append(ctx, testStream(id, 1, "r-1")),
	}
	_, checks["Load"] = st.Load(ctx, id, 1, eventstore.MaxVersion)
	_, checks["LoadByTime"] = st.LoadByTime(ctx, id, time.Time{}, time.Now())
	_, checks["RequestExists"] = st.RequestExists(ctx, id, "r-1")
	_, checks["Lookup"] = st.Lookup(ctx, id, "r-1")
	_, checks["ScanAggregateIDs"] = st.ScanAggregateIDs(ctx, other, "", 10)
	for name, err := range checks {
		if !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s of another context: %v, want IllegalArgument", name, err)
		}
	}
}

func TestNewEventStoreRefusesBadInput(t *testing.T) {
	db := newTestDB(t, Options{})
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		context string
		opts    EventStoreOptions
	}{
		{"empty context", "", EventStoreOptions{}},
		{"context with a quote", `sh"op`, EventStoreOptions{}},
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

func TestEventStoreRefusesInvalidUTF8(t *testing.T) {
	st := newTestEventStore(t, newTestDB(t, Options{}), "shop", EventStoreOptions{})
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1")
	for name, mutate := range map[string]func(*factum.EventStream){
		"body":   func(s *factum.EventStream) { s.Events[0].Body = []byte("\"\xff\"") },
		"owner":  func(s *factum.EventStream) { s.OwnerID = "\xff" },
		"header": func(s *factum.EventStream) { s.Header = map[string]string{"k": "\xfe"} },
	} {
		s := testStream(id, 1, "r-1")
		mutate(s)
		if err := st.Append(context.Background(), s); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("invalid UTF-8 in the %s: %v, want IllegalArgument", name, err)
		}
	}
	if got, _ := st.Load(context.Background(), id, 1, eventstore.MaxVersion); len(got) != 0 {
		t.Fatalf("refused streams were stored: %d", len(got))
	}
}

// Two contexts share one database file in tables of their own.
func TestEventStoreContextsShareADatabase(t *testing.T) {
	db := newTestDB(t, Options{})
	shop := newTestEventStore(t, db, "shop", EventStoreOptions{})
	billing := newTestEventStore(t, db, "billing", EventStoreOptions{})
	ctx := context.Background()
	a := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("x")
	b := factum.NamedAggregate{Context: "billing", Aggregate: "cart"}.WithID("x")
	if err := shop.Append(ctx, testStream(a, 1, "r")); err != nil {
		t.Fatal(err)
	}
	if err := billing.Append(ctx, testStream(b, 1, "r")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		st *EventStore
		id factum.AggregateID
	}{{shop, a}, {billing, b}} {
		got, err := c.st.ReadLog(ctx, factum.Position{}, 10)
		if err != nil || len(got) != 1 || got[0].AggregateID != c.id {
			t.Fatalf("%s log = %+v, %v; want the one stream of %s", c.st.Context(), got, err, c.id)
		}
	}
	// A second store of the same context on the same file sees the same
	// streams: the migration ran once.
	again := newTestEventStore(t, db, "shop", EventStoreOptions{})
	if got, err := again.Load(ctx, a, 1, 1); err != nil || len(got) != 1 {
		t.Fatalf("second store of the context: %d streams, %v", len(got), err)
	}
}

func TestEventStoreClose(t *testing.T) {
	db := newTestDB(t, Options{})
	st, err := NewEventStore(context.Background(), db, "shop", EventStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c")
	if err := st.Append(context.Background(), testStream(id, 1, "r-1")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if err := st.Append(context.Background(), testStream(id, 2, "r-2")); !errors.Is(err, ErrEventStoreClosed) || !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("append after close: %v, want ErrEventStoreClosed, a factum.ErrClosed", err)
	}
}

// Concurrent appends of every outcome at once, coalesced into shared
// transactions: each caller gets its own outcome, and only the appends that
// should go in are stored.
func TestEventStoreCoalescedMixedOutcomes(t *testing.T) {
	st := newTestEventStore(t, newTestDB(t, Options{}), "kit", EventStoreOptions{})
	var before int64
	n := eventstoretest.AppendMixedOutcomes(t, st, func() { before = st.stats.batches.Load() })
	if batches := st.stats.batches.Load() - before; batches >= int64(n) {
		t.Errorf("%d concurrent appends took %d transactions: nothing was coalesced", n, batches)
	}
}
