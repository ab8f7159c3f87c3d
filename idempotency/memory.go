package idempotency

import (
	"bytes"
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// memoryShards spreads keys over independent locks, so that goroutines
// working on different keys rarely wait for each other.
const memoryShards = 64

// minSweep is the shard size below which expired records are only removed
// when touched (or by Purge).
const minSweep = 128

// Memory is a Store in process memory: the reference implementation of the
// state machine, for tests, single-process services and benchmarks. It is
// safe for concurrent use. Records do not survive the process.
//
// Expiry is judged by MemoryConfig.Clock's wall-clock reading (its
// monotonic part dropped), read under the lock of the key's shard, so every decision on a key follows the clock's order, and
// attempts come from one counter taken under the same lock, so they rise in
// the order owners are granted a key.
//
// Expired records are removed when touched, by Purge, and by an amortised
// sweep of a shard whenever it has doubled in size since its last sweep, so
// memory stays bounded by about twice the live records without a
// background goroutine.
//
// Memory is the front end ([Front]) over the memory backend.
type Memory struct {
	*Front
	b *memoryBackend
}

// memoryBackend is the memory Backend.
type memoryBackend struct {
	policy   Policy
	clock    func() time.Time
	seed     maphash.Seed
	attempts atomic.Uint64
	shards   [memoryShards]memoryShard
}

type memoryShard struct {
	mu      sync.Mutex
	records map[Key]Record
	sweepAt int
	_       [40]byte // keep neighbouring shards' locks off one cache line
}

// MemoryConfig configures NewMemory. The zero value is the default.
type MemoryConfig struct {
	// Policy sets the lease and the retention; the zero value is the
	// default policy.
	Policy Policy
	// Clock returns the current time; nil means time.Now. Tests inject a
	// fake clock to move through leases and retention without sleeping.
	Clock func() time.Time
}

// NewMemory returns an empty in-memory store. It fails with an
// IllegalArgument error for an invalid policy.
func NewMemory(cfg MemoryConfig) (*Memory, error) {
	p, err := cfg.Policy.Normalize()
	if err != nil {
		return nil, err
	}
	read := cfg.Clock
	if read == nil {
		read = time.Now
	}
	// Expiry is judged on the wall-clock instant a record reports
	// (ExpiresAt, which callers, other stores and the SQL backends read
	// as wall time), so a reading's monotonic part is dropped: Go reads
	// the two clocks one after the other, and a thread paused between
	// the reads gets a monotonic part that lags its wall part, which made
	// a record live here past the ExpiresAt it showed.
	clock := func() time.Time { return read().Round(0) }
	b := &memoryBackend{policy: p, clock: clock, seed: maphash.MakeSeed()}
	for i := range b.shards {
		b.shards[i].records = make(map[Key]Record)
		b.shards[i].sweepAt = minSweep
	}
	return &Memory{Front: NewFront(b), b: b}, nil
}

// Policy returns the store's lease and retention.
func (m *Memory) Policy() Policy { return m.b.policy }

// Purge implements Purger: it deletes every expired record, one shard at
// a time, and stops early when ctx is done.
func (m *Memory) Purge(ctx context.Context) (int64, error) { return m.b.purge(ctx) }

// Len returns the number of records held, expired ones not yet removed
// included. It is meant for tests and metrics.
func (m *Memory) Len() int { return m.b.len() }

func (m *memoryBackend) shard(k Key) *memoryShard {
	return &m.shards[maphash.Comparable(m.seed, k)%memoryShards]
}

// live returns the live record of k, deleting it if it has expired. The
// caller holds s.mu.
func (s *memoryShard) live(k Key, now time.Time) (Record, bool) {
	r, ok := s.records[k]
	if !ok {
		return Record{}, false
	}
	if !now.Before(r.ExpiresAt) {
		delete(s.records, k)
		return Record{}, false
	}
	return r, true
}

// put stores r and sweeps the shard when it has doubled since the last
// sweep. The caller holds s.mu.
func (s *memoryShard) put(k Key, r Record, now time.Time) {
	s.records[k] = r
	if len(s.records) >= s.sweepAt {
		s.sweep(now)
		s.sweepAt = max(2*len(s.records), minSweep)
	}
}

// sweep deletes the shard's expired records. The caller holds s.mu.
func (s *memoryShard) sweep(now time.Time) int64 {
	var n int64
	for k, r := range s.records {
		if !now.Before(r.ExpiresAt) {
			delete(s.records, k)
			n++
		}
	}
	return n
}

// Begin implements Backend.
func (m *memoryBackend) Begin(ctx context.Context, k Key, fingerprint string) (Record, bool, error) {
	s := m.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Read the clock under the lock, so that decisions on one key follow
	// the clock's order.
	now := m.clock()
	if cur, ok := s.live(k, now); ok {
		rec, claim, err := BeginExisting(k, cur, fingerprint)
		if !claim {
			rec.Response = bytes.Clone(rec.Response)
			return rec, false, err
		}
	}
	// One counter for all keys: a key whose record expired and was
	// deleted still gets an attempt higher than any it had before.
	rec := Record{
		State:       StateInProgress,
		Fingerprint: fingerprint,
		ExpiresAt:   now.Add(m.policy.Lease),
		Attempt:     m.attempts.Add(1),
	}
	s.put(k, rec, now)
	return rec, true, nil
}

// finish applies a transition of the owning attempt under the shard lock:
// to state, valid for validity from now, with response (done only).
func (m *memoryBackend) finish(ctx context.Context, op string, k Key, fingerprint string, attempt uint64,
	state State, validity time.Duration, response []byte) (Record, error) {
	if state == StateDone {
		response = bytes.Clone(response) // outside the lock
		if response == nil {
			response = []byte{}
		}
	}
	s := m.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := m.clock()
	cur, ok := s.live(k, now)
	if err := CheckOwner(op, k, cur, ok, fingerprint, attempt); err != nil {
		return Record{}, err
	}
	cur.State, cur.Response, cur.ExpiresAt = state, response, now.Add(validity)
	s.records[k] = cur
	return cur, nil
}

// Complete implements Backend. The response is copied.
func (m *memoryBackend) Complete(ctx context.Context, k Key, fingerprint string, attempt uint64, response []byte) error {
	_, err := m.finish(ctx, "complete", k, fingerprint, attempt, StateDone, m.policy.Retention, response)
	return err
}

// Fail implements Backend.
func (m *memoryBackend) Fail(ctx context.Context, k Key, fingerprint string, attempt uint64, retryable bool) error {
	state := StateFailed
	if retryable {
		state = StateRetryable
	}
	_, err := m.finish(ctx, "fail", k, fingerprint, attempt, state, m.policy.Retention, nil)
	return err
}

// Renew implements Backend.
func (m *memoryBackend) Renew(ctx context.Context, k Key, fingerprint string, attempt uint64) (Record, error) {
	return m.finish(ctx, "renew", k, fingerprint, attempt, StateInProgress, m.policy.Lease, nil)
}

// Get implements Backend. The returned response is a copy.
func (m *memoryBackend) Get(ctx context.Context, k Key) (Record, bool, error) {
	s := m.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.live(k, m.clock())
	r.Response = bytes.Clone(r.Response)
	return r, ok, nil
}

func (m *memoryBackend) purge(ctx context.Context) (int64, error) {
	var n int64
	for i := range m.shards {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		s := &m.shards[i]
		s.mu.Lock()
		n += s.sweep(m.clock())
		s.mu.Unlock()
	}
	return n, nil
}

func (m *memoryBackend) len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.records)
		s.mu.Unlock()
	}
	return n
}
