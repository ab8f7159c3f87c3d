package prepare

import (
	"bytes"
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// Memory is the in-process backend, for tests and single-process
// applications: maps split over 64 lock shards by a hash of (name, key), so
// that goroutines working on different keys rarely wait for each other. Its
// reservations die with the process.
//
// Expiry is judged by MemoryConfig.Clock (time.Now by default).
// Expired records stay in the map, visible to GetValue, until the key is
// prepared again or [Memory.Purge] removes them; a long-running process
// with many expiring keys should call Purge periodically.
//
// Memory implements [Backend] and [KeyChanger]; every operation is atomic
// under its key's shard lock, and a key change holds both keys' locks. It
// is safe for concurrent use.
type Memory struct {
	now    func() time.Time
	seed   maphash.Seed
	shards [memoryShards]memoryShard
}

const memoryShards = 64

type memoryShard struct {
	mu      sync.Mutex
	records map[memoryKey]memoryRecord
	_       [48]byte // keeps neighbouring shards' locks off one cache line
}

type memoryKey struct{ name, key string }

type memoryRecord struct {
	value     []byte
	expiresAt int64
}

// MemoryConfig configures NewMemory. The zero value is the default.
type MemoryConfig struct {
	// Clock judges expiry; nil means time.Now. Tests inject a manual
	// clock (preparetest.Clock) to move through expiries without sleeping.
	Clock func() time.Time
}

// NewMemory returns an empty memory backend.
func NewMemory(cfg MemoryConfig) *Memory {
	now := cfg.Clock
	if now == nil {
		now = time.Now
	}
	m := &Memory{now: now, seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].records = make(map[memoryKey]memoryRecord)
	}
	return m
}

// shard returns the shard of k, locked; the caller unlocks it.
func (m *Memory) shard(k memoryKey) *memoryShard {
	s := &m.shards[m.index(k)]
	s.mu.Lock()
	return s
}

func (m *Memory) index(k memoryKey) uint64 {
	var h maphash.Hash
	h.SetSeed(m.seed)
	h.WriteString(k.name)
	h.WriteByte(0)
	h.WriteString(k.key)
	return h.Sum64() % memoryShards
}

// live returns the live record under k. Callers hold s.mu.
func (s *memoryShard) live(k memoryKey, nowMilli int64) (memoryRecord, bool) {
	r, ok := s.records[k]
	if !ok || Expired(r.expiresAt, nowMilli) {
		return memoryRecord{}, false
	}
	return r, true
}

// Prepare implements [Backend].
func (m *Memory) Prepare(_ context.Context, name, key string, value []byte, expiresAt int64) (bool, error) {
	k := memoryKey{name, key}
	s := m.shard(k)
	defer s.mu.Unlock()
	if _, held := s.live(k, m.now().UnixMilli()); held {
		return false, nil
	}
	s.records[k] = memoryRecord{value: bytes.Clone(value), expiresAt: expiresAt}
	return true, nil
}

// Get implements [Backend].
func (m *Memory) Get(_ context.Context, name, key string) (Record, bool, error) {
	s := m.shard(memoryKey{name, key})
	r, ok := s.records[memoryKey{name, key}]
	nowMilli := m.now().UnixMilli()
	s.mu.Unlock()
	if !ok {
		return Record{}, false, nil
	}
	return Record{Value: bytes.Clone(r.value), ExpiresAt: r.expiresAt, Expired: Expired(r.expiresAt, nowMilli)}, true, nil
}

// Rollback implements [Backend].
func (m *Memory) Rollback(_ context.Context, name, key string) (bool, error) {
	k := memoryKey{name, key}
	s := m.shard(k)
	defer s.mu.Unlock()
	_, held := s.live(k, m.now().UnixMilli())
	delete(s.records, k)
	return held, nil
}

// RollbackValue implements [Backend].
func (m *Memory) RollbackValue(_ context.Context, name, key string, value []byte) (bool, error) {
	k := memoryKey{name, key}
	s := m.shard(k)
	defer s.mu.Unlock()
	r, held := s.live(k, m.now().UnixMilli())
	if !held || !bytes.Equal(r.value, value) {
		return false, nil
	}
	delete(s.records, k)
	return true, nil
}

// Reprepare implements [Backend].
func (m *Memory) Reprepare(_ context.Context, name, key string, oldValue, newValue []byte, expiresAt int64) (bool, error) {
	k := memoryKey{name, key}
	s := m.shard(k)
	defer s.mu.Unlock()
	r, held := s.live(k, m.now().UnixMilli())
	if !held || !bytes.Equal(r.value, oldValue) {
		return false, nil
	}
	s.records[k] = memoryRecord{value: bytes.Clone(newValue), expiresAt: expiresAt}
	return true, nil
}

// ChangeKey implements [KeyChanger].
func (m *Memory) ChangeKey(_ context.Context, name, oldKey string, oldValue []byte, newKey string, newValue []byte, expiresAt int64) (bool, error) {
	ok, nk := memoryKey{name, oldKey}, memoryKey{name, newKey}
	// Both shards' locks, always taken in index order, so two key changes
	// in opposite directions cannot deadlock.
	oi, ni := m.index(ok), m.index(nk)
	os, ns := &m.shards[oi], &m.shards[ni]
	switch {
	case oi == ni:
		os.mu.Lock()
		defer os.mu.Unlock()
	case oi < ni:
		os.mu.Lock()
		ns.mu.Lock()
		defer os.mu.Unlock()
		defer ns.mu.Unlock()
	default:
		ns.mu.Lock()
		os.mu.Lock()
		defer ns.mu.Unlock()
		defer os.mu.Unlock()
	}
	nowMilli := m.now().UnixMilli()
	if _, taken := ns.live(nk, nowMilli); taken {
		return false, nil
	}
	r, held := os.live(ok, nowMilli)
	if !held || !bytes.Equal(r.value, oldValue) {
		return false, ErrNotHeld
	}
	delete(os.records, ok)
	ns.records[nk] = memoryRecord{value: bytes.Clone(newValue), expiresAt: expiresAt}
	return true, nil
}

// Purge removes every expired record and returns how many it removed. It
// locks one shard at a time, and stops early when ctx is done.
func (m *Memory) Purge(ctx context.Context) (int64, error) {
	var n int64
	for i := range m.shards {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		s := &m.shards[i]
		s.mu.Lock()
		nowMilli := m.now().UnixMilli()
		for k, r := range s.records {
			if Expired(r.expiresAt, nowMilli) {
				delete(s.records, k)
				n++
			}
		}
		s.mu.Unlock()
	}
	return n, nil
}
