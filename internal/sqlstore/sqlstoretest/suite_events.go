package sqlstoretest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoretest"
	"github.com/factum-go/factum/internal/built"
)

// events makes an event store closed at t's cleanup.
func events(t testing.TB, stores Stores, boundedContext string, single bool) EventStore {
	t.Helper()
	return Closed(stores.Events(boundedContext, single))(t)
}

func (b Backend) eventStoreContract(t *testing.T) {
	for _, c := range []struct {
		name   string
		single bool
	}{{"coalescing", false}, {"one append per statement", true}} {
		t.Run(c.name, func(t *testing.T) {
			eventstoretest.Run(t, func(t *testing.T) eventstore.Store { return events(t, b.Open(t), "kit", c.single) })
		})
	}
}

// Stream builds a valid one-event stream.
func Stream(id factum.AggregateID, version int, requestID string) *factum.EventStream {
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

var shopCart = factum.NamedAggregate{Context: "shop", Aggregate: "cart"}

func (b Backend) eventStoreRefusesOtherContexts(t *testing.T) {
	st := events(t, b.Open(t), "shop", false)
	ctx := context.Background()
	other := factum.NamedAggregate{Context: "billing", Aggregate: "invoice"}
	id := other.WithID("i-1")
	checks := map[string]error{
		"Append": st.Append(ctx, Stream(id, 1, "r-1")),
	}
	g := built.GroupOf(st)
	if g == nil {
		t.Fatal("the store does not append groups")
	}
	checks["AppendBuiltGroup"] = g.AppendBuiltGroup(ctx, []built.Stream{built.Mark(Stream(id, 1, "r-1")), built.Mark(Stream(id, 2, "r-2"))})
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
	for _, name := range []string{"", `sh"op`} {
		if _, err := b.Open(t).Events(name, false); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("context %q: %v, want IllegalArgument", name, err)
		}
	}
}

func (b Backend) eventStoreRefusesInvalidUTF8(t *testing.T) {
	st := events(t, b.Open(t), "shop", false)
	id := shopCart.WithID("c-1")
	for name, mutate := range map[string]func(*factum.EventStream){
		"body":   func(s *factum.EventStream) { s.Events[0].Body = []byte("\"\xff\"") },
		"owner":  func(s *factum.EventStream) { s.OwnerID = "\xff" },
		"header": func(s *factum.EventStream) { s.Header = map[string]string{"k": "\xfe"} },
	} {
		s := Stream(id, 1, "r-1")
		mutate(s)
		if err := st.Append(context.Background(), s); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("invalid UTF-8 in the %s: %v, want IllegalArgument", name, err)
		}
	}
	if got, _ := st.Load(context.Background(), id, 1, eventstore.MaxVersion); len(got) != 0 {
		t.Fatalf("refused streams were stored: %d", len(got))
	}
}

// Two contexts share one database in tables of their own.
func (b Backend) eventStoreContextsShareADatabase(t *testing.T) {
	stores := b.Open(t)
	shop, billing := events(t, stores, "shop", false), events(t, stores, "billing", false)
	ctx := context.Background()
	a := shopCart.WithID("x")
	c := factum.NamedAggregate{Context: "billing", Aggregate: "cart"}.WithID("x")
	if err := shop.Append(ctx, Stream(a, 1, "r")); err != nil {
		t.Fatal(err)
	}
	if err := billing.Append(ctx, Stream(c, 1, "r")); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		st EventStore
		id factum.AggregateID
	}{{shop, a}, {billing, c}} {
		got, err := s.st.ReadLog(ctx, factum.Position{}, 10)
		if err != nil || len(got) != 1 || got[0].AggregateID != s.id {
			t.Fatalf("%s log = %+v, %v; want the one stream of %s", s.st.Context(), got, err, s.id)
		}
	}
	// A second store of the same context on the same database sees the
	// same streams: the migration ran once.
	again := events(t, stores, "shop", false)
	if got, err := again.Load(ctx, a, 1, 1); err != nil || len(got) != 1 {
		t.Fatalf("second store of the context: %d streams, %v", len(got), err)
	}
}

func (b Backend) eventStoreClose(t *testing.T) {
	st := Must(b.Open(t).Events("shop", false))(t)
	id := shopCart.WithID("c")
	if err := st.Append(context.Background(), Stream(id, 1, "r-1")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if err := st.Append(context.Background(), Stream(id, 2, "r-2")); !errors.Is(err, b.ErrClosed) || !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("append after close: %v, want %v, a factum.ErrClosed", err, b.ErrClosed)
	}
	// A group appended after Close is refused, and nothing of it is
	// stored.
	groups := built.GroupOf(st)
	if groups == nil {
		t.Fatal("the store does not append groups")
	}
	other := shopCart.WithID("g")
	group := []built.Stream{built.Mark(Stream(other, 1, "g-1")), built.Mark(Stream(other, 2, "g-2"))}
	if err := groups.AppendBuiltGroup(context.Background(), group); !errors.Is(err, b.ErrClosed) || !errors.Is(err, factum.ErrClosed) {
		t.Fatalf("group after close: %v, want %v, a factum.ErrClosed", err, b.ErrClosed)
	}
	if got, err := st.Load(context.Background(), other, 1, 10); err != nil || len(got) != 0 {
		t.Fatalf("after the refused group: %v, %v", got, err)
	}
}
