package snapshotter

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/snapshot"
)

// BatchSaver is a snapshot store's fast path for the snapshots of one
// consumer batch: the SQL stores implement it. Without it the snapshotter
// saves each snapshot with Save (the in-memory store has a batch save of
// its own that only the snapshotter calls, under SavePerBatch). A store that wraps another by embedding
// it and overrides Save must override or hide the fast paths too, which
// the embedding would otherwise promote past its Save.
type BatchSaver interface {
	// SaveBatch saves each snapshot as Save would, one after another (a
	// version never moves backwards, an equal one repairs), all at once:
	// on an error none is saved. saved[i] reports whether snaps[i] was
	// written; false means a newer version, or another tenant's snapshot,
	// holds its aggregate. The snapshotter gives each aggregate at most
	// once.
	SaveBatch(ctx context.Context, snaps []snapshot.Snapshot) (saved []bool, err error)
}

// CheckpointBatchSaver is a snapshot store's fast path that also saves a
// consumer group's checkpoint in the transaction of the snapshots, when
// the checkpoint store is one of its own database's: the SQL stores
// implement it.
type CheckpointBatchSaver interface {
	// SaveBatchAt is SaveBatch that, when checkpoints is a store it can
	// write in the same transaction, also saves group's position pos there
	// (as SaveCheckpoint would: it never moves backwards) and reports
	// checkpointed; otherwise it saves the snapshots alone, and the
	// caller saves the checkpoint.
	SaveBatchAt(ctx context.Context, snaps []snapshot.Snapshot, checkpoints event.CheckpointStore, group factum.Function, pos factum.Position) (saved []bool, checkpointed bool, err error)
}
