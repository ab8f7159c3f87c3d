package snapshotter_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshotter"
)

func TestABatchSavesEachAggregateOnceAndSignalsEveryStreamAfterTheCommit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st, _ := b.open(t)
		const n, per = 5, 20
		appendHistory(t, st, n, per)
		eng, cs, w := startSnapshotter(t, st, newCounting)
		waitFor(t, "every stream's SNAPSHOT signal", func() bool { return w.count() == n*per })
		w.stop(t, eng)
		checkFinal(t, st, n, per)
		w.checkEach(t, per)
		writes, batches := cs.totals()
		for a := range n {
			if got := writes[fmt.Sprint("t", a)]; got != 1 {
				t.Fatalf("t%d: %d row writes for %d streams in one batch, want 1", a, got, per)
			}
		}
		if _, fast := cs.QueryStore.(snapshotter.BatchSaver); !fast {
			// Saved one by one: the collapse is what counts.
			checkCheckpointAtEnd(t, st)
			return
		}
		if len(batches) != 1 || batches[0].snaps != n {
			t.Fatalf("batch saves %+v, want one of %d snapshots", batches, n)
		}
		if !batches[0].checkpointed {
			t.Fatal("the checkpoint was not saved in the snapshots' transaction")
		}
		checkCheckpointAtEnd(t, st)
	})
}

// The consumer polls the log hourly here: a failed save is tried again at
// once, not after a wait for appends (the streams are in one short page,
// after which the consumer waits for more).
func TestASaveThatFailsHoldsTheCheckpointAndTheSignalsAndLosesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st, _ := b.open(t)
		const n, per = 4, 10
		appendHistory(t, st, n, per)
		cps, err := st.CheckpointStore(context.Background(), "snapb")
		if err != nil {
			t.Fatal(err)
		}
		var early []string
		eng, cs, w := startConsuming(t, st, func(qs snapshot.QueryStore) *counting {
			c := newCounting(qs)
			c.fail = func(call int) error {
				if call > 3 {
					return nil
				}
				// While saves fail, the checkpoint stays before every
				// stream and no SNAPSHOT signal is out.
				if pos, err := cps.Checkpoint(context.Background(), snapshotGroup); err != nil || pos != (factum.Position{}) {
					early = append(early, fmt.Sprintf("call %d: checkpoint %s, %v", call, pos, err))
				}
				return errors.New("the disk is on fire")
			}
			return c
		}, snapshotter.SavePerBatch, event.Config{PollInterval: time.Hour})
		checkRecovered(t, st, eng, w, n, per, func() (int, []string) {
			cs.mu.Lock()
			defer cs.mu.Unlock()
			return cs.calls, early
		})
	})
}

func TestACrashInTheMiddleOfABatchLosesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st, reopen := b.open(t)
		const n, per = 6, 8
		appendHistory(t, st, n, per)
		// The first process saves one by one (no transaction) and dies
		// after the third save of its batch: three snapshots are saved,
		// the rest and the checkpoint are not.
		eng, _, _ := startSnapshotter(t, st, func(qs snapshot.QueryStore) *counting {
			c := newCounting(qs)
			c.hide = true
			c.fail = func(call int) error {
				if call > 3 {
					return errors.New("killed")
				}
				return nil
			}
			return c
		})
		waitFor(t, "the saves before the crash", func() bool {
			qs, _ := st.SnapshotStore(context.Background(), "snapb")
			saved := 0
			for a := range n {
				if _, err := qs.Load(context.Background(), tallies.ID(fmt.Sprint("t", a))); err == nil {
					saved++
				}
			}
			return saved == 3
		})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = eng.Shutdown(ctx) // the crash: nothing drains
		// The next process replays the log from the checkpoint.
		st2 := reopen()
		eng2, cs2, w2 := startSnapshotter(t, st2, newCounting)
		waitFor(t, "every stream's SNAPSHOT signal after the restart", func() bool { return w2.count() == n*per })
		w2.stop(t, eng2)
		checkFinal(t, st2, n, per)
		checkCheckpointAtEnd(t, st2)
		writes, _ := cs2.totals()
		for id, w := range writes {
			if w != 1 {
				t.Fatalf("the replay wrote %s %d times, want once (one batch)", id, w)
			}
		}
	})
}

func TestSaveAutoBatchesWhereTheStoreHasAFastPath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st, _ := b.open(t)
		const n, per = 2, 10
		appendHistory(t, st, n, per)
		eng, cs, w := startWith(t, st, newCounting, snapshotter.SaveAuto)
		waitFor(t, "every stream's SNAPSHOT signal", func() bool { return w.count() == n*per })
		if err := eng.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		checkFinal(t, st, n, per)
		writes, _ := cs.totals()
		want := 1 // the SQL stores: per batch
		if b.name == "memory" {
			want = per // no fast path: per stream
		}
		if writes["t0"] != want {
			t.Fatalf("%d row writes of t0, want %d", writes["t0"], want)
		}
	})
}

// A function run outside its consumer (compensation's re-delivery, which
// calls the handler itself) saves at once: nothing would save a batch.
func TestARedeliveryOutsideTheConsumerSavesAtOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st, _ := b.open(t)
		appendHistory(t, st, 1, 3)
		ctx := context.Background()
		// An engine whose snapshotter's consumer never runs (not started).
		eng, err := engine.New(engine.Config{Storage: st,
			Snapshotter: snapshotter.NewComponent(snapshotter.ComponentConfig{Saves: snapshotter.SavePerBatch})}, tallies)
		if err != nil {
			t.Fatal(err)
		}
		h, ok := eng.Functions().Function(factum.Function{Context: "snapb", Processor: snapshotter.Processor, Name: "tally"})
		if !ok {
			t.Fatal("no snapshotter function")
		}
		es, err := st.EventStore(ctx, "snapb")
		if err != nil {
			t.Fatal(err)
		}
		id := tallies.ID("t0")
		streams, err := es.Load(ctx, id, 1, 3)
		if err != nil || len(streams) != 3 {
			t.Fatalf("history: %d streams, %v", len(streams), err)
		}
		if err := event.Invoke(ctx, h, &streams[2], time.Minute); err != nil {
			t.Fatal(err)
		}
		qs, err := st.SnapshotStore(ctx, "snapb")
		if err != nil {
			t.Fatal(err)
		}
		if snap, err := qs.Load(ctx, id); err != nil || snap.Version != 3 {
			t.Fatalf("after the re-delivery: %+v, %v; want version 3 saved", snap, err)
		}
	})
}
