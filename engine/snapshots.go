package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/component"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshotter"
)

// SnapshotProcessor is the processor name the snapshotter's functions
// carry: Function{Context, "snapshotter", <aggregate name>}.
const SnapshotProcessor = snapshotter.Processor

// RegenerateSnapshot rebuilds the aggregate's snapshot from its whole
// history and saves it, whatever the strategy: the operator's repair for a
// snapshot that is missing, stale or damaged (a save at an equal version
// replaces the stored one). It returns the snapshot as stored, which is a
// newer one if the snapshotter saved a later version meanwhile. Without a
// snapshot store it is an IllegalState error.
func (r *Engine) RegenerateSnapshot(ctx context.Context, id factum.AggregateID) (snapshot.Snapshot, error) {
	if r.snapshotter == nil {
		return snapshot.Snapshot{}, factum.IllegalState("runtime: no snapshot store configured, or a snapshotter that cannot regenerate")
	}
	typ, ok := r.registry.Lookup(id.NamedAggregate)
	if !ok {
		return snapshot.Snapshot{}, factum.NotFound(fmt.Sprintf("no aggregate type %s", id.NamedAggregate))
	}
	return r.snapshotter.Regenerate(ctx, typ, id)
}

// regenerator is a snapshotter that repairs one aggregate's snapshot, as
// snapshotter.Component does.
type regenerator interface {
	Regenerate(ctx context.Context, typ aggregate.Type, id factum.AggregateID) (snapshot.Snapshot, error)
}

// snapshotterOf returns the snapshotter cfg asks for: Config.Snapshotter,
// or the default over Config.SnapshotStore, or none.
func snapshotterOf(cfg *Config) (component.Component[component.Host], error) {
	switch {
	case cfg.DisableSnapshotter && cfg.Snapshotter != nil:
		return nil, factum.IllegalArgument("engine: Config.Snapshotter and DisableSnapshotter are both set")
	case cfg.Snapshotter != nil && cfg.SnapshotStrategy != nil:
		// It configures the default; a snapshotter of one's own takes its
		// strategy where it is made.
		return nil, factum.IllegalArgument("engine: Config.SnapshotStrategy configures the default snapshotter; with Config.Snapshotter set it where the snapshotter is made")
	case cfg.DisableSnapshotter:
		return nil, nil
	case cfg.Snapshotter != nil:
		return cfg.Snapshotter, nil
	case cfg.SnapshotStore != nil:
		return snapshotter.NewComponent(snapshotter.ComponentConfig{Store: cfg.SnapshotStore,
			Strategy: cfg.SnapshotStrategy, CacheSize: cfg.CacheSize}), nil
	}
	return nil, nil
}

// SnapshotSource returns the aggregate.SnapshotSource over store that an
// engine with Config.SnapshotStore and no Config.Snapshots gives its
// executors: a missing snapshot is none, and any other error of the
// store's is returned as it is (another tenant's snapshot is the store's
// TenantMismatch). httpapi.Config.Snapshots takes it to start state reads
// from the same snapshots.
func SnapshotSource(store snapshot.Store) aggregate.SnapshotSource {
	return snapshotSource{store}
}

// snapshotSource lets processors start from the latest snapshot.
type snapshotSource struct{ store snapshot.Store }

func (s snapshotSource) LatestState(ctx context.Context, id factum.AggregateID) (aggregate.StoredState, bool, error) {
	snap, err := s.store.Load(ctx, id)
	if errors.Is(err, factum.ErrNotFound) {
		return aggregate.StoredState{}, false, nil
	}
	if err != nil {
		return aggregate.StoredState{}, false, err
	}
	return aggregate.StoredState{ID: snap.AggregateID, Version: snap.Version, OwnerID: snap.OwnerID,
		Deleted: snap.Deleted, EventTime: snap.EventTime, State: snap.State}, true, nil
}
