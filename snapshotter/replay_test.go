package snapshotter_test

import (
	"context"
	"testing"
)

// A batch that replays an aggregate's streams from its first (its
// checkpoint lost, or behind the store) leaves the snapshot stored at
// their versions as it is, as saving per stream does: the aggregate's
// entry, begun without a look at the store, checks the store before it
// folds on, rather than saving the replay over the stored snapshot at an
// equal version, which repairs.
func TestABatchReplayDoesNotSaveOverTheStoredSnapshot(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st, _ := b.open(t)
		appendHistory(t, st, 1, 3)
		ctx := context.Background()
		qs, err := st.SnapshotStore(ctx, "snapb")
		if err != nil {
			t.Fatal(err)
		}
		id := tallies.ID("t0")
		const stored = `{"Total":1000,"Adds":3}` // no fold of the history makes it
		if _, err := qs.Save(ctx, snapAt(id, 3, stored)); err != nil {
			t.Fatal(err)
		}
		eng, _, w := startSnapshotter(t, st, newCounting)
		waitFor(t, "every stream's SNAPSHOT signal", func() bool { return w.count() == 3 })
		w.stop(t, eng)
		got, state := loadTally(t, qs, id)
		if got.Version != 3 || state != (Tally{Total: 1000, Adds: 3}) {
			t.Fatalf("after the replay: v%d %s; want v3 %s as stored", got.Version, got.State, stored)
		}
	})
}
