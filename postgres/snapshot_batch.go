package postgres

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/snapshot"
)

// SaveBatch saves snaps in one transaction, each as Save would (a version
// never moves backwards, an equal one repairs, a row never changes
// tenant); on an error none is saved. saved[i] reports whether snaps[i]
// was written: false means a newer version, or another tenant's snapshot,
// holds its aggregate. It is the snapshotter's fast path for the
// snapshots of one consumer batch.
func (s *SnapshotStore) SaveBatch(ctx context.Context, snaps []snapshot.Snapshot) ([]bool, error) {
	return s.core.SaveBatch(ctx, snaps)
}

// SaveBatchAt is SaveBatch that, when checkpoints is a CheckpointStore of
// the same DB, also saves group's checkpoint at pos (never moving it
// backwards) in the same transaction and reports checkpointed; otherwise
// it saves the snapshots alone and the caller saves the checkpoint.
func (s *SnapshotStore) SaveBatchAt(ctx context.Context, snaps []snapshot.Snapshot, checkpoints event.CheckpointStore, group factum.Function, pos factum.Position) (saved []bool, checkpointed bool, err error) {
	var core *sqlstore.Checkpoints
	if c, ok := checkpoints.(*CheckpointStore); ok {
		core, _ = c.checkpointStore.(*sqlstore.Checkpoints)
	}
	return s.core.SaveBatchAt(ctx, snaps, core, group, pos)
}
