package command

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// CheckerConfig configures a RequestChecker. Zero fields take the defaults.
type CheckerConfig struct {
	// Capacity is the number of request IDs a filter holds before it is
	// rotated; default 1,000,000.
	Capacity uint
	// FalsePositiveRate is the filter's target rate at capacity; default
	// 1e-5.
	FalsePositiveRate float64
	// Window is the longest a filter serves before it is rotated; default
	// one hour.
	Window time.Duration
}

// RequestChecker is the gateway's request-ID pre-check: an early answer
// for repeated requests, not the guarantee (the event store's append is).
// Each aggregate type has a bloom filter of the (aggregate ID, request ID)
// pairs sent recently; a pair the filter has certainly not seen goes on at
// once, and a "maybe seen" is settled by the event store. Filters rotate:
// when the current one is full or its window passed it becomes the previous
// one, which is still consulted, and the one before is cleared.
type RequestChecker struct {
	store  eventstore.Store
	cfg    CheckerConfig
	mu     sync.RWMutex
	byType map[factum.NamedAggregate]*rotatingFilter
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
	return &RequestChecker{store: store, cfg: cfg, byType: make(map[factum.NamedAggregate]*rotatingFilter)}, nil
}

// Check reports whether the request was already appended for the
// aggregate, and if so returns its stream. It records the request as seen
// either way. The record is atomic: of many concurrent checks of one new
// request, exactly one finds it unseen; the others ask the store. A store
// error is returned as is: the request must then be refused, not let
// through unchecked.
func (c *RequestChecker) Check(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, bool, error) {
	if !c.filter(id.NamedAggregate).testAndAdd(id.ID, requestID, c.cfg) {
		return factum.EventStream{}, false, nil
	}
	s, err := c.store.Lookup(ctx, id, requestID)
	switch {
	case err == nil:
		return s, true, nil
	case errors.Is(err, factum.ErrNotFound):
		return factum.EventStream{}, false, nil
	}
	return factum.EventStream{}, false, err
}

func (c *RequestChecker) filter(n factum.NamedAggregate) *rotatingFilter {
	c.mu.RLock()
	f := c.byType[n]
	c.mu.RUnlock()
	if f != nil {
		return f
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if f = c.byType[n]; f == nil {
		f = &rotatingFilter{}
		c.byType[n] = f
	}
	return f
}

// rotatingFilter is a pair of bloom filters: entries go into cur; lookups
// consult cur and prev.
type rotatingFilter struct {
	mu    sync.Mutex
	cur   *bloom.BloomFilter
	prev  *bloom.BloomFilter
	n     uint
	since time.Time
	key   []byte // scratch buffer, guarded by mu
}

// testAndAdd records (aggregateID, requestID) and reports whether it may
// have been recorded before. Test and add happen under one lock: that is
// what makes the check atomic (a lock-free test followed by an add lets
// concurrent duplicates through).
func (f *rotatingFilter) testAndAdd(aggregateID, requestID string, cfg CheckerConfig) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == nil {
		f.cur = bloom.NewWithEstimates(cfg.Capacity, cfg.FalsePositiveRate)
		f.since = time.Now()
	} else if f.n >= cfg.Capacity || f.n%1024 == 0 && time.Since(f.since) >= cfg.Window {
		if f.prev == nil {
			f.prev = bloom.NewWithEstimates(cfg.Capacity, cfg.FalsePositiveRate)
		} else {
			f.prev.ClearAll()
		}
		f.cur, f.prev = f.prev, f.cur
		f.n = 0
		f.since = time.Now()
	}
	f.key = append(append(append(f.key[:0], aggregateID...), 0), requestID...)
	seen := f.cur.TestAndAdd(f.key)
	if !seen {
		f.n++
		if f.prev != nil {
			seen = f.prev.Test(f.key)
		}
	}
	return seen
}
