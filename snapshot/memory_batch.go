package snapshot

import (
	"context"

	"github.com/factum-go/factum"
)

// SaveBatch saves each snapshot as Save would, one after another, holding
// each aggregate type's lock once per run of snapshots of that type: the
// snapshotter's fast path for the snapshots of one consumer batch. It
// checks every snapshot before saving any, so on an error none is saved.
// saved[i] reports whether snaps[i] was written; false means a newer
// version, or another tenant's snapshot, holds its aggregate (which Save
// reports as a TenantMismatch error).
func (m *Memory) SaveBatch(ctx context.Context, snaps []Snapshot) ([]bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range snaps {
		if err := snaps[i].Validate(); err != nil {
			return nil, err
		}
	}
	saved := make([]bool, len(snaps))
	var t *memoryType
	var named factum.NamedAggregate
	for i := range snaps {
		s := snaps[i].Normalized()
		if t == nil || s.AggregateID.NamedAggregate != named {
			if t != nil {
				t.mu.Unlock()
			}
			named = s.AggregateID.NamedAggregate
			t = m.typeOf(named, true)
			t.mu.Lock()
		}
		saved[i] = t.putLocked(s)
	}
	if t != nil {
		t.mu.Unlock()
	}
	return saved, nil
}

// putLocked is Save's write of a normalized, valid snapshot, under t's
// lock: it reports whether s was written.
func (t *memoryType) putLocked(s Snapshot) bool {
	i, ok := t.index[s.AggregateID.ID]
	if !ok {
		t.index[s.AggregateID.ID] = len(t.snaps)
		t.snaps = append(t.snaps, s)
		t.docs = append(t.docs, nil)
		t.stale++
		return true
	}
	old := &t.snaps[i]
	if old.AggregateID.Tenant != s.AggregateID.Tenant || old.Version > s.Version {
		return false
	}
	if t.docs[i] != nil {
		t.docs[i] = nil
		t.stale++
	}
	t.snaps[i] = s
	return true
}
