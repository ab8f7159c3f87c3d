package snapshotter

import (
	"hash/maphash"
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// stateHints holds, per aggregate, the latest state the executor reached
// by an append (the "state event" of the stream it appended), so that the
// snapshotter can save it as the stream's snapshot without folding the
// stream again. The fold moves off the snapshotter, which handles a
// context's streams one at a time, onto the executor's lanes, which run
// in parallel. Hints are in-process only: streams appended by another
// instance, and any hint that was dropped, are folded as before.
type stateHints struct {
	seed   maphash.Seed
	limit  int // per shard; 0 keeps nothing
	shards [hintShards]hintShard
}

const hintShards = 32

// hintShard maps aggregate IDs (the ID string alone, which hashes faster
// than the whole identity) to states; a state is only used for the exact
// identity it holds, so two aggregates sharing an ID string at worst take
// each other's place. The map holds pointers to states it recycles
// through free: a StoredState is too large for the map to hold inline, so
// a map of values would allocate on every insert, which is once per
// stream.
type hintShard struct {
	mu   sync.Mutex
	m    map[string]*aggregate.StoredState
	free []*aggregate.StoredState // cleared, for the next insert; never more than limit
}

// release clears st, so that it holds no state, and keeps it for reuse.
func (sh *hintShard) release(st *aggregate.StoredState) {
	*st = aggregate.StoredState{}
	sh.free = append(sh.free, st)
}

// newStateHints returns hints for about size aggregates at a time.
func newStateHints(size int) *stateHints {
	h := &stateHints{seed: maphash.MakeSeed()}
	if size > 0 {
		h.limit = (size + hintShards - 1) / hintShards
	}
	for i := range h.shards {
		h.shards[i].m = make(map[string]*aggregate.StoredState)
	}
	return h
}

func (h *stateHints) shard(id factum.AggregateID) *hintShard {
	return &h.shards[maphash.String(h.seed, id.ID)%hintShards]
}

// ObserveState implements aggregate.StateObserver. A full shard takes no
// new aggregate: the snapshotter folds its streams instead.
func (h *stateHints) ObserveState(st aggregate.StoredState) {
	st.ID.Tenant = st.ID.TenantOrDefault()
	sh := h.shard(st.ID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old, ok := sh.m[st.ID.ID]; ok {
		if old.ID != st.ID || old.Version < st.Version {
			*old = st
		}
		return
	}
	if len(sh.m) >= h.limit {
		return
	}
	var p *aggregate.StoredState
	if n := len(sh.free); n > 0 {
		p, sh.free = sh.free[n-1], sh.free[:n-1]
	} else {
		p = new(aggregate.StoredState)
	}
	*p = st
	sh.m[st.ID.ID] = p
}

// take returns the state of id at version, if hinted, and forgets it. A
// hint of an older version is dropped; a newer one stays for its stream.
func (h *stateHints) take(id factum.AggregateID, version int) (aggregate.StoredState, bool) {
	id.Tenant = id.TenantOrDefault()
	sh := h.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	p, ok := sh.m[id.ID]
	if !ok || p.ID != id || p.Version > version {
		return aggregate.StoredState{}, false
	}
	st := *p
	delete(sh.m, id.ID)
	sh.release(p)
	return st, st.Version == version
}

// forget drops the hint of id, if any.
func (h *stateHints) forget(id factum.AggregateID) {
	sh := h.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if p, ok := sh.m[id.ID]; ok {
		delete(sh.m, id.ID)
		sh.release(p)
	}
}
