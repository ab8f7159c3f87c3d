package eventstoremodel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"pgregory.net/rapid"
)

// NewStore returns an empty store for one rapid run and a function that
// releases it.
type NewStore func(t *rapid.T) (eventstore.Store, func())

// Aggregate is the aggregate type the model writes; stores must serve its
// bounded context.
var Aggregate = factum.NamedAggregate{Context: "model", Aggregate: "account"}

// modelStream is what the model remembers of an appended stream.
type modelStream struct {
	id, requestID string
	version       int
	pos           factum.Position
}

type modelAggregate struct {
	tenant  string
	streams []modelStream
}

// machine is the state machine: the store under test and the model.
type machine struct {
	ctx    context.Context
	store  eventstore.Store
	aggs   map[string]*modelAggregate
	log    []modelStream // every appended stream, in log order
	nextID int
}

var (
	aggIDs   = []string{"a", "b", "c"}
	tenants  = []string{"t1", "t2"}
	requests = []string{"r1", "r2", "r3", "r4", "r5"}
)

func (m *machine) stream(agg, tenant, requestID string, version int) *factum.EventStream {
	m.nextID++
	id := Aggregate.WithID(agg).WithTenant(tenant)
	return &factum.EventStream{
		ID: fmt.Sprintf("s-%d", m.nextID), AggregateID: id, Version: version,
		CommandID: fmt.Sprintf("c-%d", m.nextID), RequestID: requestID, CreateTime: time.Now(),
		Events: []factum.DomainEvent{{ID: fmt.Sprintf("e-%d", m.nextID), Name: "deposited", Sequence: 1, IsLast: true, Body: []byte(`{"n":1}`)}},
	}
}

// expect is the model's verdict on an append: nil, or the sentinel the
// store must return, in the contract's precedence.
func (m *machine) expect(agg, tenant, requestID string, version int) error {
	a := m.aggs[agg]
	if a == nil {
		if version != 1 {
			return factum.ErrEventVersionConflict
		}
		return nil
	}
	if a.tenant != tenant {
		return factum.ErrTenantMismatch
	}
	for _, s := range a.streams {
		if s.requestID == requestID {
			return factum.ErrDuplicateRequestID
		}
	}
	if version == 1 {
		return factum.ErrDuplicateAggregateID
	}
	if version != len(a.streams)+1 {
		return factum.ErrEventVersionConflict
	}
	return nil
}

func (m *machine) record(s *factum.EventStream) {
	agg := s.AggregateID.ID
	a := m.aggs[agg]
	if a == nil {
		a = &modelAggregate{tenant: s.AggregateID.Tenant}
		m.aggs[agg] = a
	}
	ms := modelStream{id: s.ID, requestID: s.RequestID, version: s.Version, pos: s.Position}
	a.streams = append(a.streams, ms)
	m.log = append(m.log, ms)
}

func codeOf(err error) string {
	var fe *factum.Error
	if errors.As(err, &fe) {
		return string(fe.Code)
	}
	if err == nil {
		return "nil"
	}
	return "untyped: " + err.Error()
}

func (m *machine) last(agg string) int {
	if a := m.aggs[agg]; a != nil {
		return len(a.streams)
	}
	return 0
}

// Append appends with a version near the aggregate's next one and a
// request ID from a small pool, so every conflict comes up.
func (m *machine) Append(t *rapid.T) {
	agg := rapid.SampledFrom(aggIDs).Draw(t, "agg")
	tenant := rapid.SampledFrom(tenants).Draw(t, "tenant")
	rid := rapid.SampledFrom(requests).Draw(t, "request")
	next := m.last(agg) + 1
	version := rapid.SampledFrom([]int{next, next, next, 1, next - 1, next + 1}).Draw(t, "version")
	if version < 1 {
		version = 1
	}
	s := m.stream(agg, tenant, rid, version)
	want := m.expect(agg, tenant, rid, version)
	err := m.store.Append(m.ctx, s)
	switch {
	case want == nil && err != nil:
		t.Fatalf("append %s@%s v%d %s: %v, want success", agg, tenant, version, rid, err)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("append %s@%s v%d %s: %s, want %v", agg, tenant, version, rid, codeOf(err), want)
	case want == nil:
		if s.Position.IsZero() {
			t.Fatalf("append %s v%d: no position set", agg, version)
		}
		if n := len(m.log); n > 0 && !m.log[n-1].pos.Less(s.Position) {
			t.Fatalf("append %s v%d: position %v not after the previous append's %v", agg, version, s.Position, m.log[n-1].pos)
		}
		m.record(s)
	}
}

// AppendRace appends the next version of one aggregate from several
// goroutines at once, each with a new request ID: exactly one wins, the
// others get EventVersionConflict (or DuplicateAggregateId for a create).
func (m *machine) AppendRace(t *rapid.T) {
	agg := rapid.SampledFrom(aggIDs).Draw(t, "agg")
	n := rapid.IntRange(2, 4).Draw(t, "racers")
	tenant := tenants[0]
	if a := m.aggs[agg]; a != nil {
		tenant = a.tenant
	}
	version := m.last(agg) + 1
	streams := make([]*factum.EventStream, n)
	errs := make([]error, n)
	for i := range streams {
		streams[i] = m.stream(agg, tenant, fmt.Sprintf("race-%d-%d", m.nextID, i), version)
	}
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() { errs[i] = m.store.Append(m.ctx, streams[i]) })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("race for %s v%d: two appends won", agg, version)
		case err == nil:
			winner = i
		case !errors.Is(err, factum.ErrEventVersionConflict) && !(version == 1 && errors.Is(err, factum.ErrDuplicateAggregateID)):
			t.Fatalf("race for %s v%d: loser got %s", agg, version, codeOf(err))
		}
	}
	if winner < 0 {
		t.Fatalf("race for %s v%d: no append won: %v", agg, version, errs)
	}
	m.record(streams[winner])
	// Concurrent appends may take log positions in any order; keep the
	// model's log in the store's order.
	slices.SortStableFunc(m.log, func(a, b modelStream) int {
		switch {
		case a.pos.Less(b.pos):
			return -1
		case b.pos.Less(a.pos):
			return 1
		}
		return 0
	})
}

// Load loads a random range and compares it with the model.
func (m *machine) Load(t *rapid.T) {
	agg := rapid.SampledFrom(aggIDs).Draw(t, "agg")
	last := m.last(agg)
	from := rapid.IntRange(0, last+2).Draw(t, "from")
	to := rapid.IntRange(from-1, last+2).Draw(t, "to")
	if rapid.Bool().Draw(t, "open") {
		to = eventstore.MaxVersion
	}
	tenant := tenants[0]
	if a := m.aggs[agg]; a != nil {
		tenant = a.tenant
	}
	got, err := m.store.Load(m.ctx, Aggregate.WithID(agg).WithTenant(tenant), from, to)
	if from < 1 || to < from {
		if !errors.Is(err, factum.ErrIllegalArgument) {
			t.Fatalf("load %s [%d, %d]: %s, want IllegalArgument", agg, from, to, codeOf(err))
		}
		return
	}
	if err != nil {
		t.Fatalf("load %s [%d, %d]: %v", agg, from, to, err)
	}
	var want []string
	if a := m.aggs[agg]; a != nil {
		for _, s := range a.streams {
			if s.version >= from && s.version <= to {
				want = append(want, s.id)
			}
		}
	}
	var ids []string
	for i, s := range got {
		ids = append(ids, s.ID)
		if i > 0 && s.Version != got[i-1].Version+1 {
			t.Fatalf("load %s: versions %d then %d", agg, got[i-1].Version, s.Version)
		}
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("load %s [%d, %d]: streams %v, want %v", agg, from, to, ids, want)
	}
}

// Lookup asks for a request ID and checks RequestExists agrees.
func (m *machine) Lookup(t *rapid.T) {
	agg := rapid.SampledFrom(aggIDs).Draw(t, "agg")
	rid := rapid.SampledFrom(requests).Draw(t, "request")
	tenant := tenants[0]
	var want *modelStream
	if a := m.aggs[agg]; a != nil {
		tenant = a.tenant
		for i := range a.streams {
			if a.streams[i].requestID == rid {
				want = &a.streams[i]
			}
		}
	}
	id := Aggregate.WithID(agg).WithTenant(tenant)
	got, err := m.store.Lookup(m.ctx, id, rid)
	exists, xerr := m.store.RequestExists(m.ctx, id, rid)
	if xerr != nil {
		t.Fatalf("request exists %s %s: %v", agg, rid, xerr)
	}
	if want == nil {
		if !errors.Is(err, factum.ErrNotFound) || exists {
			t.Fatalf("lookup %s %s: %s (exists %v), want NotFound", agg, rid, codeOf(err), exists)
		}
		return
	}
	if err != nil || got.ID != want.id || got.Version != want.version || !exists {
		t.Fatalf("lookup %s %s: %s v%d %v (exists %v), want %s v%d", agg, rid, got.ID, got.Version, err, exists, want.id, want.version)
	}
}

// ReadLog reads the global log after a position the model saw, and
// compares with the model's log.
func (m *machine) ReadLog(t *rapid.T) {
	k := rapid.IntRange(-1, len(m.log)-1).Draw(t, "after")
	limit := rapid.IntRange(1, 5).Draw(t, "limit")
	var after factum.Position
	if k >= 0 {
		after = m.log[k].pos
	}
	got, err := m.store.ReadLog(m.ctx, after, limit)
	if err != nil {
		t.Fatalf("read log after %v: %v", after, err)
	}
	var want, ids []string
	for _, s := range m.log[k+1 : min(len(m.log), k+1+limit)] {
		want = append(want, s.id)
	}
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("read log after %v limit %d: %v, want %v", after, limit, ids, want)
	}
}

// Scan lists the aggregates and compares with the model.
func (m *machine) Scan(t *rapid.T) {
	after := rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, "after")
	got, err := m.store.ScanAggregateIDs(m.ctx, Aggregate, after, 10)
	if err != nil {
		t.Fatalf("scan after %q: %v", after, err)
	}
	var want, ids []string
	for _, id := range aggIDs {
		if a := m.aggs[id]; a != nil && id > after {
			want = append(want, id+"@"+a.tenant)
		}
	}
	for _, id := range got {
		ids = append(ids, id.ID+"@"+id.Tenant)
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("scan after %q: %v, want %v", after, ids, want)
	}
}

// Check runs the state machine against stores from newStore, one per
// rapid run (rapid's -rapid.checks flag sets how many; default 100).
func Check(t *testing.T, newStore NewStore) {
	rapid.Check(t, func(t *rapid.T) {
		store, release := newStore(t)
		defer release()
		m := &machine{ctx: context.Background(), store: store, aggs: map[string]*modelAggregate{}}
		t.Repeat(rapid.StateMachineActions(m))
	})
}

// Check is rapid's invariant hook, run after every action: each
// aggregate's model versions are 1..n (the actions compare the store).
func (m *machine) Check(t *rapid.T) {
	for id, a := range m.aggs {
		for i, s := range a.streams {
			if s.version != i+1 {
				t.Fatalf("model of %s: stream %d has version %d", id, i, s.version)
			}
		}
	}
}
