package sqlstore

import (
	"context"
	"fmt"
	"reflect"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/snapshot"
)

// TxRunner is an Executor that runs fn in a transaction of its own,
// committed when fn returns nil and rolled back otherwise: the pgx
// executor over a pool is one.
type TxRunner interface {
	InTx(ctx context.Context, fn func(ctx context.Context, ex Executor) error) error
}

// SaveBatch implements snapshot.BatchSaver: one transaction of the
// upserts Save runs.
func (s *Snapshots) SaveBatch(ctx context.Context, snaps []snapshot.Snapshot) ([]bool, error) {
	saved, _, err := s.SaveBatchAt(ctx, snaps, nil, factum.Function{}, factum.Position{})
	return saved, err
}

// SaveBatchAt implements snapshot.CheckpointBatchSaver: the checkpoint
// joins the snapshots' transaction when checkpoints is a store of the
// same database.
func (s *Snapshots) SaveBatchAt(ctx context.Context, snaps []snapshot.Snapshot, checkpoints event.CheckpointStore, group factum.Function, pos factum.Position) (saved []bool, checkpointed bool, err error) {
	args := make([][]any, len(snaps))
	for i := range snaps {
		snap := &snaps[i]
		if err := s.checkText(snap); err != nil {
			return nil, false, err
		}
		id := snap.AggregateID
		args[i] = []any{id.Aggregate, id.ID, id.Tenant, snap.OwnerID, snap.Version, snap.EventID, snap.FirstOperator,
			snap.Operator, ToMillis(snap.FirstEventTime), ToMillis(snap.EventTime), ToMillis(snap.SnapshotTime), snap.Deleted, s.d.JSON(snap.State)}
	}
	var cps *Checkpoints
	if checkpoints != nil && s.join != nil {
		cps = s.join(checkpoints)
	}
	join := cps != nil && sameExecutor(s.read, cps.read)
	run := s.write
	if run == nil {
		tr, ok := s.read.(TxRunner)
		if !ok {
			return nil, false, factum.IllegalState(fmt.Sprintf("%s: the snapshot store has no transactions", s.d.Name))
		}
		run = tr.InTx
	}
	if len(snaps) == 0 && !join {
		return nil, false, nil
	}
	saved = make([]bool, len(snaps))
	err = run(ctx, func(ctx context.Context, ex Executor) error {
		for i := range args {
			n, err := ex.Exec(ctx, s.UpsertSQL, args[i]...)
			if err != nil {
				return fmt.Errorf("snapshot of %s v%d: %w", snaps[i].AggregateID, snaps[i].Version, err)
			}
			saved[i] = n > 0
		}
		if join {
			if _, err := ex.Exec(ctx, cps.Upsert, cps.UpsertArgs(group, pos)...); err != nil {
				return fmt.Errorf("checkpoint of %s at %s: %w", group, pos, err)
			}
		}
		return nil
	})
	switch {
	case err != nil && s.d.DataError != nil && s.d.DataError(err):
		return nil, false, factum.Errorf(factum.CodeIllegalArgument, "%s: the database refused a batch of %d snapshots: %w", s.d.Name, len(snaps), err)
	case err != nil:
		return nil, false, fmt.Errorf("%s: save a batch of %d snapshots: %w", s.d.Name, len(snaps), err)
	}
	return saved, join, nil
}

// sameExecutor reports whether a and b are the same database handle, so
// that a transaction of one writes the other's tables.
func sameExecutor(a, b Executor) bool {
	if a == nil || b == nil {
		return false
	}
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t.Comparable() && a == b
}

// CheckpointsOf returns the join of NewSnapshots for a backend whose checkpoint
// stores are of type T, each over the shared store shared returns: nil
// for any other checkpoint store.
func CheckpointsOf[T event.CheckpointStore](shared func(T) event.CheckpointStore) func(event.CheckpointStore) *Checkpoints {
	return func(c event.CheckpointStore) *Checkpoints {
		t, ok := c.(T)
		if !ok {
			return nil
		}
		core, _ := shared(t).(*Checkpoints)
		return core
	}
}
