package snapshot

import (
	"bytes"
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/query"
)

// Memory is an in-memory QueryStore. It keeps the whole contract and is
// the reference the contract kit is written against; it keeps nothing
// across restarts, so it is for tests, examples and development. It is
// the front end ([Front]) over the memory backend, which answers queries
// itself ([Finder]) and saves a batch of snapshots under one lock per
// aggregate type ([BatchSaver]). The store itself has no SaveBatch (a
// store embedding it that overrides Save would have its saves bypassed);
// the module's snapshotter, told to save per batch, saves each consumer
// batch on it by SaveBatchAtEncoded, taking the lock once per batch rather
// than once per stream.
//
// Each aggregate type has its own lock: saves of one type serialise with
// each other and with its queries, other types are not affected. A
// snapshot is decoded into a query document once, by the first query after
// it was saved: saves, which the snapshotter makes after every stream, pay
// no decoding, and queries parse each saved state at most once.
type Memory struct {
	Front
	batch BatchFront // over the same front end, for SaveBatchAtEncoded
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
	snaps snapChunks       // normalized, owned by the store
	docs  []query.Document // the snapshots' query documents, float64 numbers; nil until decoded
	stale int              // how many docs are nil
}

// snapChunks holds a type's snapshots in fixed-size chunks, so that a new
// aggregate never copies the snapshots stored before it (a Snapshot is
// some 250 bytes; a slice of them copied them all whenever it grew).
type snapChunks struct {
	chunks [][]Snapshot
	n      int
}

const snapChunk = 1024

// at returns the i-th snapshot (0-based), in place.
func (c *snapChunks) at(i int) *Snapshot { return &c.chunks[i/snapChunk][i%snapChunk] }

// add appends s and returns its position.
func (c *snapChunks) add(s Snapshot) int {
	if c.n%snapChunk == 0 {
		c.chunks = append(c.chunks, make([]Snapshot, 0, snapChunk))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, s)
	c.n++
	return c.n - 1
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
			doc, err := t.snaps.at(i).document(false)
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
	m.batch = BatchFront{Front: &m.Front, batch: b}
	return m
}

var (
	_ QueryStore = (*Memory)(nil)
	_ BatchSaver = (*memoryBackend)(nil)
)

// SaveBatchAtEncoded is BatchFront.SaveBatchAtEncoded: the snapshotter's
// save of a consumer batch, under one lock per aggregate type. The memory
// store's checkpoints are a store of their own: it never saves the
// checkpoint (checkpointed is false), the caller does. Only the module's
// snapshotter can call it.
func (m *Memory) SaveBatchAtEncoded(ctx context.Context, snaps []Snapshot, encoded []bool, checkpoints event.CheckpointStore, group factum.Function, pos factum.Position, e built.EncodedState) (saved []bool, checkpointed bool, err error) {
	return m.batch.SaveBatchAtEncoded(ctx, snaps, encoded, checkpoints, group, pos, e)
}

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
	return t.save(s), nil
}

// SaveBatch implements BatchSaver. It write-locks the types of snaps, in
// one order for every caller, for the whole batch, so that no reader sees
// part of it; a batch of one type, the snapshotter's (a consumer serves
// one bounded context, and its batch is sorted by type), takes one lock.
func (m *memoryBackend) SaveBatch(_ context.Context, snaps []Snapshot) ([]bool, error) {
	saved := make([]bool, len(snaps))
	if len(snaps) == 0 {
		return saved, nil
	}
	types := make([]*memoryType, len(snaps))
	type held struct {
		named factum.NamedAggregate
		t     *memoryType
	}
	var locked []held
	for i := range snaps {
		named := snaps[i].AggregateID.NamedAggregate
		if i > 0 && named == snaps[i-1].AggregateID.NamedAggregate {
			types[i] = types[i-1]
			continue
		}
		types[i] = m.typeOf(named, true)
		if !slices.ContainsFunc(locked, func(h held) bool { return h.t == types[i] }) {
			locked = append(locked, held{named, types[i]})
		}
	}
	slices.SortFunc(locked, func(x, y held) int {
		return cmp.Or(strings.Compare(x.named.Context, y.named.Context), strings.Compare(x.named.Aggregate, y.named.Aggregate))
	})
	for _, h := range locked {
		h.t.mu.Lock()
	}
	for i := range snaps {
		saved[i] = types[i].save(snaps[i]) == Saved
	}
	for _, h := range locked {
		h.t.mu.Unlock()
	}
	return saved, nil
}

// save saves s, with t write-locked.
func (t *memoryType) save(s Snapshot) Outcome {
	i, ok := t.index[s.AggregateID.ID]
	if !ok {
		s.State = bytes.Clone(s.State)
		t.index[s.AggregateID.ID] = t.snaps.add(s)
		t.docs = append(t.docs, nil)
		t.stale++
		return Saved
	}
	old := t.snaps.at(i)
	if old.AggregateID.Tenant != s.AggregateID.Tenant {
		return RefusedTenant
	}
	if old.Version > s.Version {
		return Stale
	}
	t.replace(i, old, s)
	return Saved
}

// replace puts s in place of old, the i-th snapshot, with t write-locked.
func (t *memoryType) replace(i int, old *Snapshot, s Snapshot) {
	if t.docs[i] != nil {
		t.docs[i] = nil
		t.stale++
	}
	s.State = reuse(old.State, s.State)
	*old = s
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
			s := *t.snaps.at(i)
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
		s := *t.snaps.at(t.index[id])
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
		out[i] = *t.snaps.at(p)
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
