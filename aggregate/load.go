package aggregate

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
)

// loadPage bounds how many streams an executor loads at once when it
// rebuilds an aggregate.
const loadPage = 1024

// checkout checks the aggregate's state out for cmd: the cached entry, or
// the state loaded from the snapshot and the store when none is cached or
// the cached one is behind the version cmd expects. It tells o of the
// cache lookup and po of the load.
func (p *processor[S]) checkout(ctx context.Context, cmd *factum.Command, o CacheObserver, po PhaseObserver) (*entry[S], error) {
	e := p.cache.take(cmd.AggregateID.ID)
	hit := e != nil && cmd.ExpectedVersion <= e.st.Version
	if o != nil {
		o.ObserveCache(hit)
	}
	if hit {
		return e, nil
	}
	// A caller expecting a version the cache has not reached has seen
	// another instance's append: the cached state is stale.
	lctx := startPhase(ctx, po, PhaseLoad)
	e, err := p.load(lctx, cmd.AggregateID)
	endPhase(lctx, po, PhaseLoad, err)
	if err != nil {
		if errors.Is(err, factum.ErrTenantMismatch) {
			// A snapshot of another tenant's aggregate: answered as
			// the gate answers another tenant.
			err = OtherTenant(cmd)
		}
		return nil, err
	}
	return e, nil
}

// follow applies an appended stream, built from events and named names,
// to e's state. It reports false when the state cannot follow, which then
// is not to be cached.
func (p *processor[S]) follow(e *entry[S], stream *factum.EventStream, names []string, events []any) bool {
	if e.st.Version == 0 {
		e.st.ID = stream.AggregateID
		e.st.OwnerID = stream.OwnerID
	}
	e.st.EventTime = stream.CreateTime
	return p.def.Apply(&e.st, stream.Version, names, events) == nil
}

// load rebuilds an aggregate from its latest snapshot, if any, and the
// streams after it.
func (p *processor[S]) load(ctx context.Context, id factum.AggregateID) (*entry[S], error) {
	st := p.def.newEnvelope(id)
	if p.snapshots != nil {
		ss, ok, err := p.snapshots.LatestState(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("aggregate %s: load snapshot: %w", id, err)
		}
		if ok && ss.ID.TenantOrDefault() != id.TenantOrDefault() {
			return nil, loadedOtherTenant(id)
		}
		if ok {
			if st, err = p.def.FromStored(ss); err != nil {
				return nil, err
			}
		}
	}
	for {
		streams, err := p.store.Load(ctx, id, st.Version+1, st.Version+loadPage)
		if err != nil {
			return nil, fmt.Errorf("aggregate %s: load streams: %w", id, err)
		}
		if st.Version == 0 && len(streams) > 0 && streams[0].AggregateID.TenantOrDefault() != id.TenantOrDefault() {
			// Checked before a stream is sourced: another tenant's history
			// is never decoded for a command, so its sourcing failures
			// (which name its events and versions) cannot reach it.
			return nil, loadedOtherTenant(id)
		}
		for i := range streams {
			if err := p.def.Source(p.codec, &st, &streams[i]); err != nil {
				return nil, err
			}
		}
		if len(streams) < loadPage {
			break
		}
	}
	return &entry[S]{key: id.ID, st: st}, nil
}

// Forgetter is implemented by executors that cache states: Forget drops
// what they hold of an aggregate, so that its next command loads it from
// the snapshot and the store. An operator's snapshot repair uses it, as a
// state cached from a damaged snapshot would otherwise live on. A command
// running on the aggregate at that moment keeps the state it holds.
type Forgetter interface {
	Forget(id factum.AggregateID)
}

// Forget implements Forgetter.
func (p *processor[S]) Forget(id factum.AggregateID) {
	p.cache.take(id.ID) // checked out and never put back: absent from now on
}

// Forget implements Forgetter by routing to the aggregate type's executor.
func (r router) Forget(id factum.AggregateID) {
	if f, ok := r[id.NamedAggregate].(Forgetter); ok {
		f.Forget(id)
	}
}
