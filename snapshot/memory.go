package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// Memory is an in-memory QueryStore. It keeps the whole contract and is
// the reference the contract kit is written against; it keeps nothing
// across restarts, so it is for tests, examples and development.
//
// Each aggregate type has its own lock: saves of one type serialise with
// each other and with its queries, other types are not affected. Each
// snapshot is decoded into a query document once, when saved, so queries
// never parse JSON.
type Memory struct {
	mu    sync.RWMutex
	types map[factum.NamedAggregate]*memoryType
}

type memoryType struct {
	mu    sync.RWMutex
	index map[string]int   // aggregate ID -> position in snaps and docs
	snaps []Snapshot       // normalized, owned by the store
	docs  []query.Document // the snapshots' query documents, float64 numbers
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{types: map[factum.NamedAggregate]*memoryType{}}
}

var _ QueryStore = (*Memory)(nil)

// typeOf returns the collection of an aggregate type, creating it when
// create is set; otherwise it may return nil.
func (m *Memory) typeOf(named factum.NamedAggregate, create bool) *memoryType {
	m.mu.RLock()
	t := m.types[named]
	m.mu.RUnlock()
	if t != nil || !create {
		return t
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if t = m.types[named]; t == nil {
		t = &memoryType{index: map[string]int{}}
		m.types[named] = t
	}
	return t
}

// Save implements Store.
func (m *Memory) Save(ctx context.Context, s Snapshot) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := s.Validate(); err != nil {
		return false, err
	}
	s = s.Normalized()
	// Decoding happens outside the lock; only the guarded swap is inside.
	doc, err := s.document(false)
	if err != nil {
		return false, err
	}
	t := m.typeOf(s.AggregateID.NamedAggregate, true)
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.index[s.AggregateID.ID]
	if !ok {
		t.index[s.AggregateID.ID] = len(t.snaps)
		t.snaps = append(t.snaps, s)
		t.docs = append(t.docs, doc)
		return true, nil
	}
	old := &t.snaps[i]
	if old.AggregateID.Tenant != s.AggregateID.Tenant {
		return false, tenantMismatch(s.AggregateID, old.AggregateID.Tenant)
	}
	if old.Version > s.Version {
		return false, nil
	}
	t.snaps[i], t.docs[i] = s, doc
	return true, nil
}

func tenantMismatch(id factum.AggregateID, stored string) error {
	return factum.Errorf(factum.CodeTenantMismatch, "aggregate %s belongs to tenant %q, not %q",
		id.NamedAggregate.String()+"/"+id.ID, stored, id.TenantOrDefault()).With(id, 0, "", "")
}

// Load implements Store.
func (m *Memory) Load(ctx context.Context, id factum.AggregateID) (Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return Snapshot{}, err
	}
	if err := id.Validate(); err != nil {
		return Snapshot{}, err
	}
	if t := m.typeOf(id.NamedAggregate, false); t != nil {
		t.mu.RLock()
		defer t.mu.RUnlock()
		if i, ok := t.index[id.ID]; ok {
			s := t.snaps[i]
			if s.AggregateID.Tenant != id.TenantOrDefault() {
				return Snapshot{}, tenantMismatch(id, s.AggregateID.Tenant)
			}
			s.State = bytes.Clone(s.State)
			return s, nil
		}
	}
	return Snapshot{}, factum.NotFound(fmt.Sprintf("no snapshot of %s", id)).With(id, 0, "", "")
}

// Find implements Querier.
func (m *Memory) Find(ctx context.Context, named factum.NamedAggregate, plan query.Plan) ([]Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := named.Validate(); err != nil {
		return nil, err
	}
	t := m.typeOf(named, false)
	if t == nil {
		// Still check the plan, so a bad plan fails whatever the data.
		_, _, err := query.Select(plan, nil)
		return []Snapshot{}, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	pos, _, err := query.Select(plan, t.docs)
	if err != nil {
		return nil, err
	}
	out := make([]Snapshot, len(pos))
	for i, p := range pos {
		out[i] = t.snaps[p]
		out[i].State = bytes.Clone(out[i].State)
	}
	return out, nil
}

// Count implements Querier.
func (m *Memory) Count(ctx context.Context, named factum.NamedAggregate, cond query.Condition) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := named.Validate(); err != nil {
		return 0, err
	}
	t := m.typeOf(named, false)
	if t == nil {
		_, err := query.Count(cond, nil)
		return 0, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	n, err := query.Count(cond, t.docs)
	return int64(n), err
}
