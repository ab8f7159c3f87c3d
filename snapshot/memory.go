package snapshot

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/query"
)

// Memory is an in-memory QueryStore. It keeps the whole contract and is
// the reference the contract kit is written against; it keeps nothing
// across restarts, so it is for tests, examples and development. It is
// the front end ([Front]) over the memory backend, which answers queries
// itself ([Finder]) and saves no batches: its saves cost a lock each.
//
// Each aggregate type has its own lock: saves of one type serialise with
// each other and with its queries, other types are not affected. A
// snapshot is decoded into a query document once, by the first query after
// it was saved: saves, which the snapshotter makes after every stream, pay
// no decoding, and queries parse each saved state at most once.
type Memory struct {
	Front
}

// memoryBackend is the memory Backend. Its map of types is copied on
// write (a new type is rare, a lookup is every save and load), so that a
// lookup takes no lock: a read lock shared by every save would make the
// cores that save contend for its counter.
type memoryBackend struct {
	mu    sync.Mutex // serialises the writers of types
	types atomic.Pointer[map[factum.NamedAggregate]*memoryType]
}

type memoryType struct {
	mu    sync.RWMutex
	index map[string]int   // aggregate ID -> position in snaps and docs
	snaps []Snapshot       // normalized, owned by the store
	docs  []query.Document // the snapshots' query documents, float64 numbers; nil until decoded
	stale int              // how many docs are nil
}

// rlockDecoded read-locks t with every query document decoded.
func (t *memoryType) rlockDecoded() error {
	for {
		t.mu.RLock()
		if t.stale == 0 {
			return nil
		}
		t.mu.RUnlock()
		t.mu.Lock()
		for i, d := range t.docs {
			if d != nil {
				continue
			}
			doc, err := t.snaps[i].document(false)
			if err != nil {
				t.mu.Unlock()
				return err
			}
			t.docs[i] = doc
			t.stale--
		}
		t.mu.Unlock()
	}
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	m := &Memory{}
	b := &memoryBackend{}
	b.types.Store(&map[factum.NamedAggregate]*memoryType{})
	m.Front.init(b, Config{Name: "snapshot: memory"})
	return m
}

var _ QueryStore = (*Memory)(nil)

// BuiltStateOwner implements built.StateSaver: the memory store saves the
// snapshotter's vouched states by its front end's SaveEncoded.
func (m *Memory) BuiltStateOwner() built.Owner { return built.OwnedBy(m) }

// typeOf returns the collection of an aggregate type, creating it when
// create is set; otherwise it may return nil.
func (m *memoryBackend) typeOf(named factum.NamedAggregate, create bool) *memoryType {
	t := (*m.types.Load())[named]
	if t != nil || !create {
		return t
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.types.Load()
	if t = old[named]; t == nil {
		t = &memoryType{index: map[string]int{}}
		types := maps.Clone(old)
		types[named] = t
		m.types.Store(&types)
	}
	return t
}

// Save implements Backend.
func (m *memoryBackend) Save(_ context.Context, s Snapshot) (Outcome, error) {
	t := m.typeOf(s.AggregateID.NamedAggregate, true)
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.index[s.AggregateID.ID]
	if !ok {
		s.State = bytes.Clone(s.State)
		t.index[s.AggregateID.ID] = len(t.snaps)
		t.snaps = append(t.snaps, s)
		t.docs = append(t.docs, nil)
		t.stale++
		return Saved, nil
	}
	old := &t.snaps[i]
	if old.AggregateID.Tenant != s.AggregateID.Tenant {
		return RefusedTenant, nil
	}
	if old.Version > s.Version {
		return Stale, nil
	}
	if t.docs[i] != nil {
		t.docs[i] = nil
		t.stale++
	}
	s.State = reuse(old.State, s.State)
	t.snaps[i] = s
	return Saved, nil
}

// reuse returns a copy of state, written over buf, the replaced snapshot's
// state, when it is large enough. The store owns every state it holds
// (what it returns is a copy), so a save of an aggregate whose state keeps
// its size, the usual case, allocates nothing.
func reuse(buf, state []byte) []byte {
	if state == nil || cap(buf) < len(state) {
		return bytes.Clone(state)
	}
	return append(buf[:0], state...)
}

// Load implements Backend.
func (m *memoryBackend) Load(_ context.Context, id factum.AggregateID) (Snapshot, bool, error) {
	if t := m.typeOf(id.NamedAggregate, false); t != nil {
		t.mu.RLock()
		defer t.mu.RUnlock()
		if i, ok := t.index[id.ID]; ok {
			s := t.snaps[i]
			s.State = bytes.Clone(s.State)
			return s, true, nil
		}
	}
	return Snapshot{}, false, nil
}

// Scan implements Backend.
func (m *memoryBackend) Scan(_ context.Context, named factum.NamedAggregate, afterID string, limit int) ([]Snapshot, error) {
	t := m.typeOf(named, false)
	if t == nil {
		return []Snapshot{}, nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	var ids []string
	for id := range t.index {
		if id > afterID {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, strings.Compare)
	out := make([]Snapshot, 0, min(len(ids), limit))
	for _, id := range ids[:min(len(ids), limit)] {
		s := t.snaps[t.index[id]]
		s.State = bytes.Clone(s.State)
		out = append(out, s)
	}
	return out, nil
}

// Find implements Finder.
func (m *memoryBackend) Find(_ context.Context, named factum.NamedAggregate, plan query.Plan) ([]Snapshot, error) {
	t := m.typeOf(named, false)
	if t == nil {
		// Still check the plan, so a bad plan fails whatever the data.
		_, _, err := query.Select(plan, nil)
		return []Snapshot{}, err
	}
	if err := t.rlockDecoded(); err != nil {
		return nil, err
	}
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

// Count implements Finder.
func (m *memoryBackend) Count(_ context.Context, named factum.NamedAggregate, cond query.Condition) (int64, error) {
	t := m.typeOf(named, false)
	if t == nil {
		_, err := query.Count(cond, nil)
		return 0, err
	}
	if err := t.rlockDecoded(); err != nil {
		return 0, err
	}
	defer t.mu.RUnlock()
	n, err := query.Count(cond, t.docs)
	return int64(n), err
}
