package snapshot

import (
	"context"

	"github.com/factum-go/factum/internal/built"
)

// SaveEncodedNext is SaveEncoded for the snapshot that follows the one
// stored for its aggregate, whatever version that is: it takes the stored
// snapshot's FirstOperator and FirstEventTime in place of s's, and saves
// s only over a lower version (an equal one stays as it is: saved is
// false). With nothing stored it saves s as it is when s.Version is 1 and
// otherwise saves nothing and reports based false: the first fields are
// then unknown to it. Checking and saving under the aggregate type's one
// lock, it lets the snapshotter save the state the executor reported
// without keeping the last snapshot's fields itself. Only the module's
// snapshotter can call it.
func (m *Memory) SaveEncodedNext(ctx context.Context, s Snapshot, _ built.EncodedState) (saved, based bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, false, err
	}
	if err := m.checkSave(&s, true); err != nil {
		return false, false, err
	}
	b := m.b.(*memoryBackend)
	t := b.typeOf(s.AggregateID.NamedAggregate, true)
	t.mu.Lock()
	o, based := t.saveNext(s)
	t.mu.Unlock()
	switch o {
	case Saved:
		return true, true, nil
	case RefusedTenant:
		return false, true, tenantMismatch(s.AggregateID)
	}
	return false, based, nil
}

// saveNext is save for SaveEncodedNext, with t write-locked: based is
// false when nothing is stored and s is not the first version, and then
// nothing is saved (the outcome is Stale).
func (t *memoryType) saveNext(s Snapshot) (o Outcome, based bool) {
	i, ok := t.index[s.AggregateID.ID]
	if !ok {
		if s.Version != 1 {
			return Stale, false
		}
		return t.save(s), true
	}
	old := t.snaps.at(i)
	switch {
	case old.AggregateID.Tenant != s.AggregateID.Tenant:
		return RefusedTenant, true
	case old.Version >= s.Version:
		return Stale, true
	}
	s.FirstOperator, s.FirstEventTime = old.FirstOperator, old.FirstEventTime
	t.replace(i, old, s)
	return Saved, true
}
