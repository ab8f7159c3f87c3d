package prepare

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// Memory is the in-process backend: a map under one mutex, for tests and
// single-process applications. Its reservations die with the process.
//
// Expiry is judged by the clock given to [NewMemory] (time.Now by default).
// Expired records stay in the map, visible to GetValue, until the key is
// prepared again or [Memory.Purge] removes them; a long-running process
// with many expiring keys should call Purge periodically.
//
// Memory implements [Backend] and [KeyChanger]; every operation, key change
// included, is atomic under the mutex. It is safe for concurrent use.
type Memory struct {
	now func() time.Time

	mu      sync.Mutex
	records map[memoryKey]memoryRecord
}

type memoryKey struct{ name, key string }

type memoryRecord struct {
	value     []byte
	expiresAt int64
}

// NewMemory returns an empty memory backend judging expiry by now, or by
// time.Now when now is nil.
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, records: make(map[memoryKey]memoryRecord)}
}

// live returns the live record under k. Callers hold m.mu.
func (m *Memory) live(k memoryKey, nowMilli int64) (memoryRecord, bool) {
	r, ok := m.records[k]
	if !ok || Expired(r.expiresAt, nowMilli) {
		return memoryRecord{}, false
	}
	return r, true
}

// Prepare implements [Backend].
func (m *Memory) Prepare(ctx context.Context, name, key string, value []byte, expiresAt int64) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	k := memoryKey{name, key}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, held := m.live(k, m.now().UnixMilli()); held {
		return false, nil
	}
	m.records[k] = memoryRecord{value: bytes.Clone(value), expiresAt: expiresAt}
	return true, nil
}

// Get implements [Backend].
func (m *Memory) Get(ctx context.Context, name, key string) (Record, bool, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, false, err
	}
	m.mu.Lock()
	r, ok := m.records[memoryKey{name, key}]
	nowMilli := m.now().UnixMilli()
	m.mu.Unlock()
	if !ok {
		return Record{}, false, nil
	}
	return Record{Value: bytes.Clone(r.value), ExpiresAt: r.expiresAt, Expired: Expired(r.expiresAt, nowMilli)}, true, nil
}

// Rollback implements [Backend].
func (m *Memory) Rollback(ctx context.Context, name, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	k := memoryKey{name, key}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, held := m.live(k, m.now().UnixMilli())
	delete(m.records, k)
	return held, nil
}

// RollbackValue implements [Backend].
func (m *Memory) RollbackValue(ctx context.Context, name, key string, value []byte) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	k := memoryKey{name, key}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, held := m.live(k, m.now().UnixMilli())
	if !held || !bytes.Equal(r.value, value) {
		return false, nil
	}
	delete(m.records, k)
	return true, nil
}

// Reprepare implements [Backend].
func (m *Memory) Reprepare(ctx context.Context, name, key string, oldValue, newValue []byte, expiresAt int64) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	k := memoryKey{name, key}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, held := m.live(k, m.now().UnixMilli())
	if !held || !bytes.Equal(r.value, oldValue) {
		return false, nil
	}
	m.records[k] = memoryRecord{value: bytes.Clone(newValue), expiresAt: expiresAt}
	return true, nil
}

// ChangeKey implements [KeyChanger].
func (m *Memory) ChangeKey(ctx context.Context, name, oldKey string, oldValue []byte, newKey string, newValue []byte, expiresAt int64) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	ok, nk := memoryKey{name, oldKey}, memoryKey{name, newKey}
	m.mu.Lock()
	defer m.mu.Unlock()
	nowMilli := m.now().UnixMilli()
	if _, taken := m.live(nk, nowMilli); taken {
		return false, nil
	}
	r, held := m.live(ok, nowMilli)
	if !held || !bytes.Equal(r.value, oldValue) {
		return false, ErrNotHeld
	}
	delete(m.records, ok)
	m.records[nk] = memoryRecord{value: bytes.Clone(newValue), expiresAt: expiresAt}
	return true, nil
}

// Purge removes every expired record and returns how many it removed.
func (m *Memory) Purge(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	nowMilli := m.now().UnixMilli()
	var n int64
	for k, r := range m.records {
		if Expired(r.expiresAt, nowMilli) {
			delete(m.records, k)
			n++
		}
	}
	return n, nil
}
