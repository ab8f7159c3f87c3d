package aggregate

import (
	"hash/maphash"
	"sync"
)

// cacheShards splits the state cache so that lanes working on different
// aggregates rarely meet on one mutex.
const cacheShards = 32

// cache is a bounded cache of aggregate states, by count, with CLOCK
// eviction (an approximation of least-recently-used that needs no list
// surgery on every use). An entry is checked out (take) while a command
// runs against it and checked back in (put) afterwards, so two calls for
// one aggregate can never share a state: the second one misses and loads
// from the store, and the store's version check settles which of them
// wins. A checked-out entry counts as absent: an entry that is never put
// back (its command failed in a way that leaves the state in doubt) is
// replaced by the next one put for its key.
type cache[S any] struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard[S]
}

type cacheShard[S any] struct {
	mu    sync.Mutex
	m     map[string]*entry[S]
	ring  []*entry[S] // the clock; len(ring) == len(m) <= limit
	hand  int
	limit int
}

// entry is one cached aggregate: its state and its place on the clock.
// Fields other than st are guarded by the shard's mutex; st belongs to
// whoever checked the entry out, or to the cache while it is checked in.
type entry[S any] struct {
	key  string
	st   State[S]
	out  bool // checked out by a running command
	used bool // taken since the clock's hand last passed
	slot int  // index in ring
}

// newCache returns a cache of about size entries; size <= 0 disables it.
func newCache[S any](size int) *cache[S] {
	c := &cache[S]{seed: maphash.MakeSeed()}
	per := 0
	if size > 0 {
		per = (size + cacheShards - 1) / cacheShards
	}
	for i := range c.shards {
		c.shards[i].m = make(map[string]*entry[S])
		c.shards[i].limit = per
	}
	return c
}

func (c *cache[S]) shard(key string) *cacheShard[S] {
	return &c.shards[maphash.String(c.seed, key)%cacheShards]
}

// take checks out and returns the entry for key, or nil if there is none
// or it is checked out already.
func (c *cache[S]) take(key string) *entry[S] {
	sh := c.shard(key)
	sh.mu.Lock()
	e := sh.m[key]
	if e != nil {
		if e.out {
			e = nil
		} else {
			e.out, e.used = true, true
		}
	}
	sh.mu.Unlock()
	return e
}

// put checks e in. If another entry for the key is checked in, the one
// with the higher version stays (the one already there on a tie); a
// checked-out one gives way to e. A new entry beyond the limit evicts the
// first entry the clock's hand finds unused since its last pass.
func (c *cache[S]) put(e *entry[S]) {
	sh := c.shard(e.key)
	if sh.limit == 0 {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e.out, e.used = false, true
	switch old := sh.m[e.key]; {
	case old == e:
		// The common case: the entry comes back.
	case old == nil:
		sh.insert(e)
	case old.out || old.st.Version < e.st.Version:
		sh.ring[old.slot] = e
		e.slot = old.slot
		sh.m[e.key] = e
	}
}

// insert adds e, evicting an entry if the shard is full.
func (sh *cacheShard[S]) insert(e *entry[S]) {
	sh.m[e.key] = e
	if len(sh.ring) < sh.limit {
		e.slot = len(sh.ring)
		sh.ring = append(sh.ring, e)
		return
	}
	// Two turns of the clock clear every used mark, so the sweep ends;
	// checked-out entries are skipped then, and only evicted when every
	// entry is checked out (their put brings them back).
	victim := -1
	for range 2 * len(sh.ring) {
		v := sh.ring[sh.hand]
		if !v.out && !v.used {
			victim = sh.hand
			break
		}
		v.used = false
		sh.hand = (sh.hand + 1) % len(sh.ring)
	}
	if victim < 0 {
		victim = sh.hand
	}
	old := sh.ring[victim]
	if sh.m[old.key] == old {
		delete(sh.m, old.key)
	}
	sh.ring[victim] = e
	e.slot = victim
	sh.hand = (victim + 1) % len(sh.ring)
}
