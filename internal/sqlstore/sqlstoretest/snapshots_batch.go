package sqlstoretest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshotter"
)

// snapshotStoreBatches: the front end over the SQL backend forwards the
// batch saves the snapshotter looks for (without them it saves one
// snapshot a transaction, silently), checked as Save checks, and a batch
// joins the checkpoint store of its own database only.
func (b Backend) snapshotStoreBatches(t *testing.T) {
	stores := b.Open(t)
	st := Must(stores.Snapshots("shop"))(t)
	cps := Must(stores.Checkpoints("shop"))(t)
	bs, batch := st.(snapshotter.BatchSaver)
	cbs, at := st.(snapshotter.CheckpointBatchSaver)
	if !batch || !at {
		t.Fatalf("%T: BatchSaver %v, CheckpointBatchSaver %v; the snapshotter would save one snapshot a transaction", st, batch, at)
	}
	ctx := context.Background()
	named := factum.NamedAggregate{Context: "shop", Aggregate: "batched"}
	snaps := func(v int, ids ...string) []snapshot.Snapshot {
		out := make([]snapshot.Snapshot, len(ids))
		for i, id := range ids {
			out[i] = snapshot.Snapshot{AggregateID: named.WithID(id), Version: v, State: json.RawMessage(`{"v":1}`)}
		}
		return out
	}
	group := factum.Function{Context: "shop", Processor: "batched"}
	saved, checkpointed, err := cbs.SaveBatchAt(ctx, snaps(2, "a", "b"), cps, group, factum.Position{Seq: 7})
	if err != nil || !checkpointed || !slices.Equal(saved, []bool{true, true}) {
		t.Fatalf("SaveBatchAt with the database's checkpoints: %v, checkpointed %v, %v", saved, checkpointed, err)
	}
	if pos, err := cps.Checkpoint(ctx, group); err != nil || pos.Seq != 7 {
		t.Fatalf("the checkpoint of the batch: %s, %v; want seq 7", pos, err)
	}
	other := event.NewMemoryCheckpoints()
	saved, checkpointed, err = cbs.SaveBatchAt(ctx, snaps(3, "a"), other, group, factum.Position{Seq: 9})
	if err != nil || checkpointed || !slices.Equal(saved, []bool{true}) {
		t.Fatalf("SaveBatchAt with another database's checkpoints: %v, checkpointed %v, %v", saved, checkpointed, err)
	}
	if pos, _ := other.Checkpoint(ctx, group); !pos.IsZero() {
		t.Fatalf("a batch wrote another database's checkpoint: %s", pos)
	}
	if saved, err := bs.SaveBatch(ctx, snaps(1, "a", "c")); err != nil || !slices.Equal(saved, []bool{false, true}) {
		t.Fatalf("SaveBatch of a stale and a new snapshot: %v, %v", saved, err)
	}
	foreign := []snapshot.Snapshot{{AggregateID: factum.NamedAggregate{Context: "billing", Aggregate: "invoice"}.WithID("i"), Version: 1, State: json.RawMessage(`{}`)}}
	if _, err := bs.SaveBatch(ctx, foreign); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Fatalf("SaveBatch of another context: %v, want IllegalArgument", err)
	}
	if _, _, err := cbs.SaveBatchAt(ctx, snaps(4, "a"), cps, factum.Function{}, factum.Position{Seq: 8}); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Fatalf("SaveBatchAt of an invalid group: %v, want IllegalArgument", err)
	}
	if got, err := st.Load(ctx, named.WithID("a")); err != nil || got.Version != 3 {
		t.Fatalf("a after the refused batch: v%d, %v; want v3", got.Version, err)
	}
}
