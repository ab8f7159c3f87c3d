package snapshotter

import (
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/snapshot"
)

// snapCache holds, for the aggregates of one type folded most recently,
// the snapshot the snapshotter saved last and the state it encodes in its
// domain type, so that the next stream of an aggregate needs neither a
// Load nor a decode. A stale entry (another instance saved since) is
// harmless: the fold then loads the missing tail, and the store's version
// guard settles the save. An entry is checked out while its aggregate is
// folded, as the fold changes the typed state in place.
type snapCache struct {
	limit int // <= 0 keeps nothing
	mu    sync.Mutex
	m     map[string]*snapEntry // by aggregate ID; pointers, so that putting one back does not allocate
}

// snapEntry is what the snapshotter keeps of one aggregate. Inside a
// batch the same entry, checked out, is the aggregate's pending snapshot
// (see batch), so that a batch allocates nothing for an aggregate the
// cache holds.
type snapEntry struct {
	snap  snapshot.Snapshot // its AggregateID's tenant is set
	typed aggregate.Typed
	out   bool // checked out; guarded by the cache's mutex

	// While pending in a batch: the cache of its type, which takes it
	// back once saved, the last stream folded into it (for the failure
	// record, should the store refuse it), whether its state is the
	// executor's, and whether it was begun at version 1 without a look at
	// the store.
	cache     *snapCache
	stream    *factum.EventStream
	encoded   bool
	unchecked bool
}

func newSnapCache(limit int) *snapCache {
	return &snapCache{limit: limit, m: make(map[string]*snapEntry)}
}

// checkout returns id's entry, checked out until keep puts it back, or nil
// when there is none or it is checked out already. An entry of another
// tenant is dropped: the store refuses it, and it is not id's.
func (c *snapCache) checkout(id factum.AggregateID) *snapEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[id.ID]
	if e == nil || e.out {
		return nil
	}
	if e.snap.AggregateID.Tenant != id.TenantOrDefault() {
		delete(c.m, id.ID)
		return nil
	}
	e.out = true
	return e
}

// release forgets e, checked out, unless another entry took its place.
func (c *snapCache) release(e *snapEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if key := e.snap.AggregateID.ID; c.m[key] == e {
		delete(c.m, key)
	}
	e.out = false
}

// drop forgets id's entry.
func (c *snapCache) drop(id factum.AggregateID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id.ID)
}

// keep puts e in the cache. A full cache drops an entry at random (map
// iteration starts at a random place), which for aggregates folded in
// turns keeps a fair share of them rather than none.
// keep puts e, checked out or new, in the cache, in place of any entry of
// its aggregate.
func (c *snapCache) keep(e *snapEntry) {
	if c.limit <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e.out = false
	key := e.snap.AggregateID.ID
	if c.m[key] == e {
		return
	}
	if len(c.m) >= c.limit {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = e
}
