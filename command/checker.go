package command

import (
	"context"
	"errors"
	"hash/maphash"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/bloom"
)

// CheckerConfig configures a RequestChecker. Zero fields take the defaults.
type CheckerConfig struct {
	// Capacity is the number of request IDs an aggregate type's filter
	// holds before it is rotated; default 1,000,000. Large filters are
	// split into up to 16 shards that each hold their share and rotate on
	// their own.
	Capacity uint
	// FalsePositiveRate is the filter's target rate at capacity; default
	// 1e-5. Filters are sized for it: about 30 bits per request ID at the
	// default, 3.7 MB per million (twice that once rotated).
	FalsePositiveRate float64
	// Window is the longest a filter serves before it is rotated; default
	// one hour. A shard looks at the clock every 64 entries, so a quiet
	// shard may serve longer.
	Window time.Duration
}

// RequestChecker is the gateway's request-ID pre-check: an early answer
// for repeated requests, not the guarantee (the event store's append is).
// Each aggregate type has a Bloom filter of the (aggregate ID, request ID)
// pairs sent recently; a pair the filter has certainly not seen goes on at
// once, and a "maybe seen" is settled by the event store. Filters rotate:
// when the current one is full or its window passed it becomes the previous
// one, which is still consulted, and the one before is cleared.
//
// A type's filter is split by key hash into shards, each with its own lock,
// its own rotating pair and its share of the capacity, at the configured
// false-positive rate. The filters are cache-blocked (package
// internal/bloom: one cache miss per check where a classic filter of this
// size takes one per bit), fed the 64-bit hash of the (aggregate ID,
// request ID) pair that also picks the shard.
type RequestChecker struct {
	store eventstore.Store
	cfg   CheckerConfig
	seed  maphash.Seed
	// Filter geometry, fixed at construction.
	shardBits uint // log2 of the number of shards
	shardCap  uint

	// byType maps aggregate types to their filters. It is replaced, not
	// changed, when a type is added, so lookups take no lock.
	byType atomic.Pointer[map[factum.NamedAggregate]*typeFilter]
	mu     sync.Mutex // serialises additions to byType
}

// NewRequestChecker returns a checker that settles "maybe seen" with store.
// A nil store is refused: without an authoritative answer a maybe-seen
// request would have to be refused.
func NewRequestChecker(store eventstore.Store, cfg CheckerConfig) (*RequestChecker, error) {
	if store == nil {
		return nil, factum.IllegalArgument("request checker: an event store is required")
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = 1_000_000
	}
	if cfg.FalsePositiveRate <= 0 || cfg.FalsePositiveRate >= 1 {
		cfg.FalsePositiveRate = 1e-5
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Hour
	}
	c := &RequestChecker{store: store, cfg: cfg, seed: maphash.MakeSeed()}
	// Shards hold at least minShardCap entries each, so that small
	// capacities are not cut into filters of a few keys.
	for c.shardBits < maxShardBits && cfg.Capacity>>(c.shardBits+1) >= minShardCap {
		c.shardBits++
	}
	c.shardCap = (cfg.Capacity + 1<<c.shardBits - 1) >> c.shardBits
	empty := map[factum.NamedAggregate]*typeFilter{}
	c.byType.Store(&empty)
	return c, nil
}

const (
	maxShardBits = 4 // 16 shards
	minShardCap  = 4096
	// windowCheck is how many entries a shard takes between looks at the
	// clock for its window: reading the clock costs more than the check.
	windowCheck = 64
)

// Check reports whether the request was already appended for the
// aggregate in id's tenant, and if so returns its stream; a stream of
// another tenant is never returned (the request is then unseen). It records the request as seen
// either way. The record is atomic: of many concurrent checks of one new
// request, exactly one finds it unseen; the others ask the store. A store
// error is returned as is: the request must then be refused, not let
// through unchecked.
func (c *RequestChecker) Check(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, bool, error) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(id.ID)
	h.WriteByte(0)
	h.WriteString(requestID)
	sum := h.Sum64()
	tf := c.filter(id.NamedAggregate)
	// The top bits pick the shard; the filters mix the whole hash again
	// for the block and the bits.
	sh := &tf.shards[sum>>(64-c.shardBits)&(1<<c.shardBits-1)]
	if !sh.testAndAdd(sum, c) {
		return factum.EventStream{}, false, nil
	}
	s, err := c.store.Lookup(ctx, id, requestID)
	switch {
	case err == nil && !sameTenant(id, &s):
		// Stores find requests in id's tenant only; one that does not is
		// still never allowed to answer with another tenant's stream.
		return factum.EventStream{}, false, nil
	case err == nil:
		return s, true, nil
	case errors.Is(err, factum.ErrNotFound):
		return factum.EventStream{}, false, nil
	}
	return factum.EventStream{}, false, err
}

func (c *RequestChecker) filter(n factum.NamedAggregate) *typeFilter {
	if f := (*c.byType.Load())[n]; f != nil {
		return f
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.byType.Load()
	if f := old[n]; f != nil {
		return f
	}
	f := &typeFilter{shards: make([]rotatingFilter, 1<<c.shardBits)}
	next := make(map[factum.NamedAggregate]*typeFilter, len(old)+1)
	maps.Copy(next, old)
	next[n] = f
	c.byType.Store(&next)
	return f
}

// typeFilter is one aggregate type's filter, in shards.
type typeFilter struct {
	shards []rotatingFilter
}

// rotatingFilter is a pair of Bloom filters: entries go into cur; lookups
// consult cur and prev.
type rotatingFilter struct {
	mu    sync.Mutex
	cur   *bloom.Filter
	prev  *bloom.Filter
	n     uint
	since time.Time
	_     [40]byte // keep neighbouring shards' locks off one cache line
}

// testAndAdd records the key with hash h and reports whether it may have
// been recorded before. Test and add happen under one lock: that is what
// makes the check atomic (a lock-free test followed by an add lets
// concurrent duplicates through).
func (f *rotatingFilter) testAndAdd(h uint64, c *RequestChecker) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == nil {
		f.cur = bloom.New(c.shardCap, c.cfg.FalsePositiveRate)
		f.since = time.Now()
	} else if f.n >= c.shardCap || f.n%windowCheck == 0 && time.Since(f.since) >= c.cfg.Window {
		if f.prev == nil {
			f.prev = bloom.New(c.shardCap, c.cfg.FalsePositiveRate)
		} else {
			f.prev.Clear()
		}
		f.cur, f.prev = f.prev, f.cur
		f.n = 0
		f.since = time.Now()
	}
	seen := f.cur.TestAndAdd(h)
	if !seen {
		f.n++
		if f.prev != nil {
			seen = f.prev.Test(h)
		}
	}
	return seen
}
