package aggregate

import (
	"hash/maphash"
	"sync"
)

// cacheShards splits the state cache so that lanes working on different
// aggregates rarely meet on one mutex.
const cacheShards = 32

// cache is a bounded LRU of aggregate states, by count. An entry is checked
// out (take) while a command runs against it and checked back in (put)
// afterwards, so two calls for one aggregate can never share a state: the
// second one misses and loads from the store, and the store's version check
// settles which of them wins.
type cache[S any] struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard[S]
}

type cacheShard[S any] struct {
	mu         sync.Mutex
	m          map[string]*entry[S]
	head, tail *entry[S] // head is the most recently used
	limit      int
}

// entry is one cached aggregate: its state and its place in the LRU list.
type entry[S any] struct {
	key        string
	st         State[S]
	prev, next *entry[S]
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

// take removes and returns the entry for key, or nil.
func (c *cache[S]) take(key string) *entry[S] {
	sh := c.shard(key)
	sh.mu.Lock()
	e := sh.m[key]
	if e != nil {
		delete(sh.m, key)
		sh.unlink(e)
	}
	sh.mu.Unlock()
	return e
}

// put checks e in as the most recently used entry, evicting the least
// recently used one beyond the limit. If another entry for the key was put
// meanwhile, the one with the higher version stays.
func (c *cache[S]) put(e *entry[S]) {
	sh := c.shard(e.key)
	if sh.limit == 0 {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old := sh.m[e.key]; old != nil {
		if old.st.Version >= e.st.Version {
			return
		}
		sh.unlink(old)
	}
	sh.m[e.key] = e
	e.prev, e.next = nil, sh.head
	if sh.head != nil {
		sh.head.prev = e
	}
	sh.head = e
	if sh.tail == nil {
		sh.tail = e
	}
	for len(sh.m) > sh.limit {
		victim := sh.tail
		sh.unlink(victim)
		delete(sh.m, victim.key)
	}
}

func (sh *cacheShard[S]) unlink(e *entry[S]) {
	if e.prev != nil {
		e.prev.next = e.next
	} else if sh.head == e {
		sh.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else if sh.tail == e {
		sh.tail = e.prev
	}
	e.prev, e.next = nil, nil
}
