package snapshot

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/built"
)

// BatchFront is the front end of a backend that saves many snapshots in
// one atomic write: a [Front] that also forwards SaveBatch and
// SaveBatchAt, after the checks Save makes of each snapshot. The
// snapshotter saves a consumer batch's snapshots through them (its
// BatchSaver and CheckpointBatchSaver), so a store of such a backend
// embeds a BatchFront, never a plain Front, which would hide them. A
// BatchFront is safe for concurrent use.
type BatchFront struct {
	*Front
	batch BatchSaver           // nil: SaveBatchAt without checkpoints
	at    CheckpointBatchSaver // nil: SaveBatch, the caller checkpoints
}

// NewBatch returns the front end over b, which implements BatchSaver or
// CheckpointBatchSaver (or both); it refuses a backend of neither.
func NewBatch(b Backend, cfg Config) (*BatchFront, error) {
	f, err := New(b, cfg)
	if err != nil {
		return nil, err
	}
	bf := &BatchFront{Front: f}
	bf.batch, _ = b.(BatchSaver)
	bf.at, _ = b.(CheckpointBatchSaver)
	if bf.batch == nil && bf.at == nil {
		return nil, factum.IllegalArgument("snapshot: NewBatch: the backend saves no batches")
	}
	return bf, nil
}

// checkBatch makes Save's checks of every snapshot, on a copy of snaps
// as the backend gets them.
func (f *BatchFront) checkBatch(ctx context.Context, snaps []Snapshot) ([]Snapshot, error) {
	out := make([]Snapshot, len(snaps))
	copy(out, snaps)
	return out, f.checkInPlace(ctx, out, nil)
}

// checkInPlace makes Save's checks of every snapshot, normalizing snaps
// in place; the state of snaps[i] is not checked when vouched[i] is set
// (see SaveEncoded).
func (f *BatchFront) checkInPlace(ctx context.Context, snaps []Snapshot, vouched []bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i := range snaps {
		if err := f.checkSave(&snaps[i], vouched != nil && vouched[i]); err != nil {
			return err
		}
	}
	return nil
}

// SaveBatch saves snaps in one atomic write, each as Save would (a
// version never moves backwards, an equal one repairs, a snapshot never
// changes tenant); on an error none is saved. saved[i] reports whether
// snaps[i] was written: false means a newer version, or another tenant's
// snapshot, holds its aggregate. It is the snapshotter's fast path for the
// snapshots of one consumer batch.
func (f *BatchFront) SaveBatch(ctx context.Context, snaps []Snapshot) ([]bool, error) {
	snaps, err := f.checkBatch(ctx, snaps)
	if err != nil {
		return nil, err
	}
	return f.saveBatch(ctx, snaps)
}

// saveBatch is SaveBatch of snapshots checked already.
func (f *BatchFront) saveBatch(ctx context.Context, snaps []Snapshot) ([]bool, error) {
	if f.batch == nil {
		saved, _, err := f.at.SaveBatchAt(ctx, snaps, nil, factum.Function{}, factum.Position{})
		return saved, err
	}
	return f.batch.SaveBatch(ctx, snaps)
}

// SaveBatchAt is SaveBatch that, when checkpoints is a checkpoint store
// the backend writes in the same transaction (a CheckpointStore of the
// same database), also saves group's checkpoint at pos (never moving it
// backwards) there and reports checkpointed; otherwise it saves the
// snapshots alone and the caller saves the checkpoint. With checkpoints
// set, it refuses an invalid group or position.
func (f *BatchFront) SaveBatchAt(ctx context.Context, snaps []Snapshot, checkpoints event.CheckpointStore, group factum.Function, pos factum.Position) (saved []bool, checkpointed bool, err error) {
	snaps, err = f.checkBatch(ctx, snaps)
	if err != nil {
		return nil, false, err
	}
	return f.saveBatchAt(ctx, snaps, checkpoints, group, pos)
}

// SaveBatchAtEncoded is SaveBatchAt for snapshots whose states, where
// encoded[i] is set, the aggregate executor encoded (see SaveEncoded): it
// skips the check that those states are JSON, and it checks and
// normalizes snaps in place rather than in a copy (the caller's buffer
// is its own). Only the module's snapshotter can call it.
func (f *BatchFront) SaveBatchAtEncoded(ctx context.Context, snaps []Snapshot, encoded []bool, checkpoints event.CheckpointStore, group factum.Function, pos factum.Position, _ built.EncodedState) (saved []bool, checkpointed bool, err error) {
	if len(encoded) != len(snaps) {
		return nil, false, factum.IllegalArgument(fmt.Sprintf("%s: SaveBatchAtEncoded: %d flags for %d snapshots", f.name, len(encoded), len(snaps)))
	}
	if err := f.checkInPlace(ctx, snaps, encoded); err != nil {
		return nil, false, err
	}
	return f.saveBatchAt(ctx, snaps, checkpoints, group, pos)
}

// saveBatchAt is SaveBatchAt of snapshots checked already.
func (f *BatchFront) saveBatchAt(ctx context.Context, snaps []Snapshot, checkpoints event.CheckpointStore, group factum.Function, pos factum.Position) (saved []bool, checkpointed bool, err error) {
	if checkpoints != nil {
		if err := event.ValidateGroup(group); err != nil {
			return nil, false, err
		}
		if err := event.ValidatePosition(pos); err != nil {
			return nil, false, err
		}
	}
	if f.at == nil {
		saved, err := f.batch.SaveBatch(ctx, snaps)
		return saved, false, err
	}
	return f.at.SaveBatchAt(ctx, snaps, checkpoints, group, pos)
}
