package eventstore

import (
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
)

const memoryShards = 64

// Memory is an in-memory Store. It keeps the whole contract and is the
// reference the contract kit is written against; it keeps nothing across
// restarts, so it is for tests, examples and development. It is the front
// end ([Front]) over the memory backend, which has every fast path.
type Memory struct {
	Front
}

// BuiltOwner implements built.Appender: the memory store appends the
// executor's streams by its front end's AppendBuilt.
func (m *Memory) BuiltOwner() built.Owner { return built.OwnedBy(m) }

// memoryBackend is the memory Backend.
type memoryBackend struct {
	seed   maphash.Seed
	shards [memoryShards]memoryShard

	// logMu guards the global log. Lock order: a shard's mutex, then logMu.
	logMu sync.RWMutex
	log   memoryLog
}

// memoryLog is the global log: the stored streams, by pointer, in
// fixed-size chunks, so that growing it never copies what is stored and an
// append writes one word.
type memoryLog struct {
	chunks [][]*factum.EventStream
	n      uint64
}

const logChunk = 4096

func (l *memoryLog) len() uint64 { return l.n }

// span appends to dst the pieces of the chunks that hold the streams with
// Position.Seq in (from, to], to at most len(); the pieces stay valid
// after the lock is released, as appends only write past them.
func (l *memoryLog) span(from, to uint64, dst [][]*factum.EventStream) [][]*factum.EventStream {
	for from < to {
		c := l.chunks[from/logChunk]
		i := from % logChunk
		j := min(logChunk, i+(to-from))
		dst = append(dst, c[i:j:j])
		from += j - i
	}
	return dst
}

func (l *memoryLog) append(s *factum.EventStream) {
	if l.n%logChunk == 0 {
		l.chunks = append(l.chunks, make([]*factum.EventStream, 0, logChunk))
	}
	c := &l.chunks[len(l.chunks)-1]
	*c = append(*c, s)
	l.n++
}

type memoryShard struct {
	mu   sync.RWMutex
	aggs map[streamKey]*memoryAggregate
}

type streamKey struct {
	context, aggregate, id string
}

// NewMemory returns an empty in-memory store. It has no settings: the
// front end's (Config) are for backends that need them.
func NewMemory() *Memory {
	b := &memoryBackend{seed: maphash.MakeSeed()}
	for i := range b.shards {
		b.shards[i].aggs = make(map[streamKey]*memoryAggregate)
	}
	m := &Memory{}
	m.Front.init(b, Config{Name: "eventstore: memory"})
	return m
}

func keyOf(id factum.AggregateID) streamKey {
	return streamKey{id.Context, id.Aggregate, id.ID}
}

func (m *memoryBackend) shard(k streamKey) *memoryShard {
	var h maphash.Hash
	h.SetSeed(m.seed)
	h.WriteString(k.context)
	h.WriteByte(0)
	h.WriteString(k.aggregate)
	h.WriteByte(0)
	h.WriteString(k.id)
	return &m.shards[h.Sum64()%memoryShards]
}

// Append implements Backend. The store keeps s itself, its header map
// included, as the Store contract allows (the caller hands it over; the
// executor gives each stream a header of its own, never the command's
// map): it sets s's tenant to the effective one and its Position.
// What can be done outside the locks (the request's hash) is; under the
// aggregate's shard lock it checks the aggregate's history, and under the
// log lock it only numbers the stream and puts one pointer in the log.
func (m *memoryBackend) Append(_ context.Context, s *factum.EventStream) (Outcome, error) {
	tenant := s.AggregateID.TenantOrDefault()
	rh := m.requestHash(s.RequestID)
	k := keyOf(s.AggregateID)
	sh := m.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	agg := sh.aggs[k]
	if o := refusal(agg, tenant, rh, s); o != Appended {
		return o, nil
	}
	m.store(sh, k, agg, tenant, []*factum.EventStream{s}, []uint64{rh})
	return Appended, nil
}

// refusal returns the refusal of s, whose effective tenant is tenant and
// whose request ID hashes to rh, as the next version of agg (nil: the
// aggregate does not exist), or Appended when s may be stored; the caller
// holds the aggregate's shard lock.
func refusal(agg *memoryAggregate, tenant string, rh uint64, s *factum.EventStream) Outcome {
	if agg == nil {
		if s.Version != 1 {
			return RefusedVersion
		}
		return Appended
	}
	switch {
	case agg.tenant != tenant:
		return RefusedTenant
	case agg.requestVersion(rh, s.RequestID) != 0:
		return RefusedRequest
	case s.Version == 1:
		return RefusedAggregate
	case s.Version != len(agg.streams)+1:
		return RefusedVersion
	}
	return Appended
}

// store stores ss, the next versions of the aggregate k of shard sh (agg,
// nil when it does not exist yet) in tenant, whose request IDs hash to
// rhs; the caller holds sh's lock and has found none of them refused. It
// sets each stream's tenant and Position.
func (m *memoryBackend) store(sh *memoryShard, k streamKey, agg *memoryAggregate, tenant string, ss []*factum.EventStream, rhs []uint64) {
	for _, s := range ss {
		s.AggregateID.Tenant = tenant
	}
	// The log lock is taken inside the shard lock, so one aggregate's
	// streams enter the log in version order.
	m.logMu.Lock()
	for _, s := range ss {
		s.Position = factum.Position{Seq: m.log.len() + 1}
		m.log.append(s)
	}
	m.logMu.Unlock()

	if agg == nil {
		agg = &memoryAggregate{tenant: tenant, requests: make(map[uint64]int32, 4)}
		sh.aggs[k] = agg
	}
	for i, s := range ss {
		agg.streams = append(agg.streams, s)
		agg.addRequest(rhs[i], s.RequestID, s.Version)
	}
}

// aggregate returns the aggregate's streams, one per version, as they are
// now. Appends only ever add to the slice, so the capped view stays valid
// after the lock is released, and stored streams never change.
func (m *memoryBackend) aggregate(id factum.AggregateID) []*factum.EventStream {
	k := keyOf(id)
	sh := m.shard(k)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	agg := sh.aggs[k]
	if agg == nil {
		return nil
	}
	return agg.streams[:len(agg.streams):len(agg.streams)]
}

func copyStreams(ptrs []*factum.EventStream) []factum.EventStream {
	out := make([]factum.EventStream, len(ptrs))
	for i, p := range ptrs {
		out[i] = *p
	}
	return out
}

// Load implements Backend.
func (m *memoryBackend) Load(_ context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error) {
	all := m.aggregate(id)
	if from > len(all) {
		return []factum.EventStream{}, nil
	}
	return copyStreams(all[from-1 : min(to, len(all))]), nil
}

// LoadByTime implements TimeLoader.
func (m *memoryBackend) LoadByTime(_ context.Context, id factum.AggregateID, start, end time.Time) ([]factum.EventStream, error) {
	out := []factum.EventStream{}
	for _, s := range m.aggregate(id) {
		if !s.CreateTime.Before(start) && s.CreateTime.Before(end) {
			out = append(out, *s)
		}
	}
	return out, nil
}

// HasRequest implements RequestProber.
func (m *memoryBackend) HasRequest(_ context.Context, id factum.AggregateID, requestID string) (bool, error) {
	return m.request(id, requestID) != nil, nil
}

// FindRequest implements RequestFinder.
func (m *memoryBackend) FindRequest(_ context.Context, id factum.AggregateID, requestID string) (factum.EventStream, bool, error) {
	if s := m.request(id, requestID); s != nil {
		return *s, true, nil
	}
	return factum.EventStream{}, false, nil
}

// request returns the aggregate's stream with the request ID, or nil when
// there is none in id's tenant.
func (m *memoryBackend) request(id factum.AggregateID, requestID string) *factum.EventStream {
	rh := m.requestHash(requestID)
	k := keyOf(id)
	sh := m.shard(k)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	// Another tenant's aggregate has no requests for id's tenant: the
	// answer is the one for a request never made.
	if agg := sh.aggs[k]; agg != nil && agg.tenant == id.TenantOrDefault() {
		if v := agg.requestVersion(rh, requestID); v != 0 {
			return agg.streams[v-1]
		}
	}
	return nil
}

// ScanAggregateIDs implements AggregateScanner.
func (m *memoryBackend) ScanAggregateIDs(_ context.Context, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error) {
	var ids []factum.AggregateID
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.RLock()
		for k, agg := range sh.aggs {
			if k.context == named.Context && k.aggregate == named.Aggregate && k.id > afterID {
				ids = append(ids, factum.AggregateID{NamedAggregate: named, ID: k.id, Tenant: agg.tenant})
			}
		}
		sh.mu.RUnlock()
	}
	slices.SortFunc(ids, func(a, b factum.AggregateID) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	if len(ids) > limit {
		ids = ids[:limit]
	}
	if ids == nil {
		ids = []factum.AggregateID{}
	}
	return ids, nil
}

// ReadLog implements Backend. The memory log commits in sequence order, so
// Position.Tx is always zero. Under the log's lock it only takes the
// pieces of the chunks that hold the streams; it copies the streams after
// releasing it, so that a read of a whole page holds no append up (stored
// streams never change, and a chunk's array never moves).
func (m *memoryBackend) ReadLog(_ context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	start := after.Seq
	if after.Tx > 0 {
		return []factum.EventStream{}, nil
	}
	var buf [2][]*factum.EventStream // a page spans two chunks at most, unless limit exceeds one
	m.logMu.RLock()
	n := m.log.len()
	if start >= n {
		m.logMu.RUnlock()
		return []factum.EventStream{}, nil
	}
	end := min(start+uint64(limit), n)
	pieces := m.log.span(start, end, buf[:0])
	m.logMu.RUnlock()
	out := make([]factum.EventStream, 0, end-start)
	for _, p := range pieces {
		for _, s := range p {
			out = append(out, *s)
		}
	}
	return out, nil
}

// WaitLog implements LogWaiter: only appends through the front end, which
// closes woken, add to the memory log.
func (m *memoryBackend) WaitLog(ctx context.Context, after factum.Position, woken <-chan struct{}) error {
	m.logMu.RLock()
	ready := after.Tx == 0 && m.log.len() > after.Seq
	m.logMu.RUnlock()
	if ready {
		return nil
	}
	select {
	case <-woken:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var (
	_ Store            = (*Memory)(nil)
	_ RequestFinder    = (*memoryBackend)(nil)
	_ RequestProber    = (*memoryBackend)(nil)
	_ TimeLoader       = (*memoryBackend)(nil)
	_ AggregateScanner = (*memoryBackend)(nil)
	_ LogWaiter        = (*memoryBackend)(nil)
	_ GroupBackend     = (*memoryBackend)(nil)
)
