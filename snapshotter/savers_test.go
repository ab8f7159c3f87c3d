package snapshotter_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshotter"
)

func snapAt(id factum.AggregateID, version int, state string) snapshot.Snapshot {
	now := time.Now()
	return snapshot.Snapshot{AggregateID: id, Version: version, EventID: factum.NewID(), OwnerID: "o", Operator: "o",
		FirstOperator: "o", FirstEventTime: now, EventTime: now, SnapshotTime: now, State: []byte(state)}
}

// TestSaveBatchKeepsSavesGuarantees checks each store's batch fast path:
// a version never moves backwards, an equal one repairs, another
// tenant's row is left alone, and the checkpoint saved with the batch
// never moves backwards either.
func TestSaveBatchKeepsSavesGuarantees(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st, _ := b.open(t)
		ctx := context.Background()
		qs, err := st.SnapshotStore(ctx, "snapb")
		if err != nil {
			t.Fatal(err)
		}
		bs, ok := qs.(snapshotter.BatchSaver)
		if !ok {
			if b.name != "memory" {
				t.Fatalf("%T has no SaveBatch", qs)
			}
			return // saved one by one
		}
		a, c := tallies.ID("a"), tallies.ID("c")
		saved, err := bs.SaveBatch(ctx, []snapshot.Snapshot{snapAt(a, 2, `{"Total":2}`), snapAt(c, 1, `{"Total":1}`)})
		if err != nil || !saved[0] || !saved[1] {
			t.Fatalf("first batch: %v, %v", saved, err)
		}
		other := c.WithTenant("acme")
		saved, err = bs.SaveBatch(ctx, []snapshot.Snapshot{snapAt(a, 1, `{"Total":1}`), snapAt(other, 5, `{"Total":5}`), snapAt(c, 1, `{"Total":10}`)})
		if err != nil || saved[0] || saved[1] || !saved[2] {
			t.Fatalf("second batch: saved %v, %v; want [false false true]", saved, err)
		}
		for _, tc := range []struct {
			id      factum.AggregateID
			version int
			state   string
		}{{a, 2, `{"Total":2}`}, {c, 1, `{"Total":10}`}} {
			got, err := qs.Load(ctx, tc.id)
			if err != nil || got.Version != tc.version || !jsonEqual(got.State, tc.state) {
				t.Fatalf("%s: v%d %s, %v; want v%d %s", tc.id.ID, got.Version, got.State, err, tc.version, tc.state)
			}
		}
		if _, err := bs.SaveBatch(ctx, []snapshot.Snapshot{snapAt(a, 3, `{}`), {AggregateID: c}}); err == nil {
			t.Fatal("a batch with an invalid snapshot was saved")
		}
		if got, _ := qs.Load(ctx, a); got.Version != 2 {
			t.Fatalf("a batch that failed saved a: v%d", got.Version)
		}

		if b.name == "postgres" {
			// jsonb refuses the escape in the database: the transaction
			// rolls back the snapshot saved before it.
			_, err := bs.SaveBatch(ctx, []snapshot.Snapshot{snapAt(a, 7, `{"Total":7}`), snapAt(c, 7, `{"x":"\u0000"}`)})
			if factum.CodeOf(err) != factum.CodeIllegalArgument {
				t.Fatalf("a state jsonb refuses: %v, want IllegalArgument", err)
			}
			if got, _ := qs.Load(ctx, a); got.Version != 2 {
				t.Fatalf("the rolled-back batch saved a: v%d", got.Version)
			}
		}
		cbs, ok := qs.(snapshotter.CheckpointBatchSaver)
		if !ok {
			return // the memory store saves checkpoints on their own
		}
		cps, err := st.CheckpointStore(ctx, "snapb")
		if err != nil {
			t.Fatal(err)
		}
		group := factum.Function{Context: "snapb", Processor: "probe"}
		at := factum.Position{Tx: 9, Seq: 3}
		saved, joined, err := cbs.SaveBatchAt(ctx, []snapshot.Snapshot{snapAt(a, 4, `{"Total":4}`)}, cps, group, at)
		if err != nil || !joined || !saved[0] {
			t.Fatalf("batch with checkpoint: %v, %v, %v", saved, joined, err)
		}
		if _, joined, err = cbs.SaveBatchAt(ctx, nil, cps, group, factum.Position{Tx: 2, Seq: 1}); err != nil || !joined {
			t.Fatalf("older checkpoint: %v, %v", joined, err)
		}
		if pos, err := cps.Checkpoint(ctx, group); err != nil || pos != at {
			t.Fatalf("checkpoint %s, %v; want %s (never backwards)", pos, err, at)
		}
		if _, joined, err = cbs.SaveBatchAt(ctx, []snapshot.Snapshot{snapAt(a, 5, `{}`)}, event.NewMemoryCheckpoints(), group, at); err != nil || joined {
			t.Fatalf("another database's checkpoints joined: %v, %v", joined, err)
		}
	})
}

func jsonEqual(got []byte, want string) bool {
	return string(normalize(got)) == string(normalize([]byte(want)))
}

func normalize(b []byte) []byte {
	out := b[:0:0]
	for _, c := range b {
		if c != ' ' {
			out = append(out, c)
		}
	}
	return out
}
