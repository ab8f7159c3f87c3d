package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoretest"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/internal/sqlstore/sqlstoretest"
)

// newTestDB opens a fresh schema, dropped at cleanup.
func newTestDB(t testing.TB, maxConns int32) *DB {
	url, schema := servicetest.PostgresSchema(t)
	db := sqlstoretest.Must(Open(context.Background(), url, Options{Schema: schema, MaxConns: maxConns}))(t)
	t.Cleanup(db.Close)
	return db
}

func newTestEventStore(t testing.TB, db *DB, boundedContext string, opts EventStoreOptions) *EventStore {
	return sqlstoretest.Closed(NewEventStore(context.Background(), db, boundedContext, opts))(t)
}

// testStream builds a valid one-event stream.
var testStream = sqlstoretest.Stream

var shopCart = factum.NamedAggregate{Context: "shop", Aggregate: "cart"}

func TestNewEventStoreRefusesBadInput(t *testing.T) {
	db := newTestDB(t, 4)
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		context string
		opts    EventStoreOptions
	}{
		{"context too long for table names", "c" + strings.Repeat("x", esMaxContextLen), EventStoreOptions{}},
		{"negative batch", "shop", EventStoreOptions{MaxBatch: -1}},
		{"negative writers", "shop", EventStoreOptions{Writers: -1}},
		{"negative poll", "shop", EventStoreOptions{PollInterval: -time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewEventStore(ctx, db, c.context, c.opts)
			if !errors.Is(err, factum.ErrIllegalArgument) {
				t.Fatalf("got %v, want IllegalArgument", err)
			}
		})
	}
	// The longest context allowed gets tables whose names PostgreSQL keeps
	// whole.
	long := "c" + strings.Repeat("x", esMaxContextLen-1)
	st := newTestEventStore(t, db, long, EventStoreOptions{})
	id := factum.NamedAggregate{Context: long, Aggregate: "cart"}.WithID("c")
	if err := st.Append(ctx, testStream(id, 1, "r")); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(ctx, testStream(id, 1, "r")); !errors.Is(err, factum.ErrDuplicateRequestID) {
		t.Fatalf("duplicate in the longest context: %v", err)
	}
}

// PostgreSQL text cannot hold a NUL, so an owner with one is refused; the
// invalid UTF-8 every SQL backend refuses is sqlstoretest's case.
func TestEventStoreRefusesTextPostgresCannotHold(t *testing.T) {
	st := newTestEventStore(t, newTestDB(t, 4), "shop", EventStoreOptions{})
	id := shopCart.WithID("c-1")
	bad := testStream(id, 1, "r-1")
	bad.OwnerID = "a\x00b"
	if err := st.Append(context.Background(), bad); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("NUL in the owner: %v, want IllegalArgument", err)
	}
	if got, _ := st.Load(context.Background(), id, 1, eventstore.MaxVersion); len(got) != 0 {
		t.Fatalf("the refused stream was stored: %d", len(got))
	}
	// What json can hold goes in and comes back as given: a NUL escaped
	// in a body or a header value.
	s := testStream(id, 1, "r-1")
	s.Events[0].Body = []byte(`{"text":"a\u0000b"}`)
	s.Header = map[string]string{"k": "a\x00b"}
	if err := st.Append(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(context.Background(), id, 1, 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("load: %v, %v", got, err)
	}
	if string(got[0].Events[0].Body) != `{"text":"a\u0000b"}` || got[0].Header["k"] != "a\x00b" {
		t.Fatalf("stored %s / %q", got[0].Events[0].Body, got[0].Header["k"])
	}
}

// Concurrent appends of every outcome at once, coalesced into shared
// statements: each caller gets its own outcome, and only the appends that
// should go in are stored.
func TestEventStoreCoalescedMixedOutcomes(t *testing.T) {
	st := newTestEventStore(t, newTestDB(t, 8), "kit", EventStoreOptions{Writers: 2})
	var before int64
	n := eventstoretest.AppendMixedOutcomes(t, st, func() { before = st.stats.Batches.Load() })
	if batches := st.stats.Batches.Load() - before; batches >= int64(n) {
		t.Errorf("%d concurrent appends took %d statements: nothing was coalesced", n, batches)
	}
}
