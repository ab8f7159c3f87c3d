package eventstore

import (
	"context"

	"github.com/factum-go/factum"
)

// AppendGroup implements GroupBackend. Under the aggregate's shard lock it
// checks every stream of the group, each as the version after the one
// before it, then stores them all, numbered together under one hold of the
// log lock, so that no reader sees a part of the group.
func (m *memoryBackend) AppendGroup(_ context.Context, ss []*factum.EventStream) (Outcome, int, error) {
	first := ss[0]
	tenant := first.AggregateID.TenantOrDefault()
	rhs := make([]uint64, len(ss))
	for i, s := range ss {
		rhs[i] = m.requestHash(s.RequestID)
	}
	k := keyOf(first.AggregateID)
	sh := m.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	agg := sh.aggs[k]
	if o := refusal(agg, tenant, rhs[0], first); o != Appended {
		return o, 0, nil
	}
	// The later streams follow the first, of one aggregate and tenant at
	// consecutive versions (the front end checked the group), so what can
	// refuse one of them is a request ID the aggregate already holds.
	if agg != nil {
		for i, s := range ss[1:] {
			if agg.requestVersion(rhs[i+1], s.RequestID) != 0 {
				return RefusedRequest, i + 1, nil
			}
		}
	}
	m.store(sh, k, agg, tenant, ss, rhs)
	return Appended, -1, nil
}
