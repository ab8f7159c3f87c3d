package snapshotter_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/memory"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshotter"
)

// ownMemory is the memory store as the snapshotter meets it when it is
// the engine's store itself: it declares the batch save of the executor's
// states as its own (BuiltStateOwner), so the snapshotter saves each
// consumer batch by it. It counts what reaches the memory store and fails
// saves while fail says so.
type ownMemory struct {
	*snapshot.Memory
	mu      sync.Mutex
	fail    func(call int) error // nil: never
	calls   int                  // save calls, batch or single
	saves   int                  // single saves (Save)
	batches []int                // snapshots per batch that reached the store
	writes  map[string]int       // snapshots written, by aggregate ID
	encoded int                  // snapshots of the executor's states, unchecked
}

func (m *ownMemory) BuiltStateOwner() built.Owner { return built.OwnedBy(m) }

func (m *ownMemory) before(snaps []snapshot.Snapshot, encoded []bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.fail != nil {
		if err := m.fail(m.calls); err != nil {
			return err
		}
	}
	for i, s := range snaps {
		m.writes[s.AggregateID.ID]++
		if encoded != nil && encoded[i] {
			m.encoded++
		}
	}
	if encoded == nil {
		m.saves++
	} else {
		m.batches = append(m.batches, len(snaps))
	}
	return nil
}

func (m *ownMemory) Save(ctx context.Context, s snapshot.Snapshot) (bool, error) {
	if err := m.before([]snapshot.Snapshot{s}, nil); err != nil {
		return false, err
	}
	return m.Memory.Save(ctx, s)
}

func (m *ownMemory) SaveBatchAtEncoded(ctx context.Context, snaps []snapshot.Snapshot, encoded []bool, cps event.CheckpointStore, group factum.Function, pos factum.Position, e built.EncodedState) ([]bool, bool, error) {
	if err := m.before(snaps, encoded); err != nil {
		return nil, false, err
	}
	return m.Memory.SaveBatchAtEncoded(ctx, snaps, encoded, cps, group, pos, e)
}

// startOwnMemory starts an engine over st (memory storage) whose snapshot
// store is st's own wrapped in ownMemory, saving per batch.
func startOwnMemory(t *testing.T, st engine.Storage, fail func(call int) error) (*engine.Engine, *ownMemory, *watcher) {
	t.Helper()
	ctx := context.Background()
	qs, err := st.SnapshotStore(ctx, "snapb")
	if err != nil {
		t.Fatal(err)
	}
	om := &ownMemory{Memory: qs.(*snapshot.Memory), fail: fail, writes: map[string]int{}}
	w := &watcher{store: qs, got: map[factum.AggregateID][]int{}}
	eng, err := engine.New(engine.Config{Storage: st, SnapshotStore: om,
		Snapshotter: snapshotter.NewComponent(snapshotter.ComponentConfig{Saves: snapshotter.SavePerBatch}),
		Signals:     func(local command.Sink) (command.Sink, error) { w.local = local; return w, nil }}, tallies)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return eng, om, w
}

// Saving per batch on the memory store, a batch holding many streams of
// each aggregate writes each aggregate once, in one call, and every
// stream's SNAPSHOT signal goes out after it.
func TestTheMemoryStoreSavesABatchOnceAndSignalsEveryStream(t *testing.T) {
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	const n, per = 5, 20
	appendHistory(t, st, n, per)
	eng, om, w := startOwnMemory(t, st, nil)
	waitFor(t, "every stream's SNAPSHOT signal", func() bool { return w.count() == n*per })
	w.stop(t, eng)
	w.checkEach(t, per)
	checkFinal(t, st, n, per)
	checkCheckpointAtEnd(t, st)
	om.mu.Lock()
	defer om.mu.Unlock()
	if om.saves != 0 || len(om.batches) != 1 || om.batches[0] != n {
		t.Fatalf("%d single saves and batches %v, want one batch of %d", om.saves, om.batches, n)
	}
	for a := range n {
		if got := om.writes[fmt.Sprint("t", a)]; got != 1 {
			t.Fatalf("t%d written %d times for %d streams in one batch, want once", a, got, per)
		}
	}
}

// While the memory store's saves fail (the batch's, then the single saves
// the snapshotter tries in its place), the checkpoint stays before every
// stream and no SNAPSHOT signal is out; once they succeed, everything is
// saved and signalled.
func TestAFailedMemoryBatchHoldsTheCheckpointAndTheSignals(t *testing.T) {
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	const n, per = 4, 10
	appendHistory(t, st, n, per)
	cps, err := st.CheckpointStore(context.Background(), "snapb")
	if err != nil {
		t.Fatal(err)
	}
	var early []string // guarded by the store's mutex, which calls fail
	eng, om, w := startOwnMemory(t, st, func(call int) error {
		if call > 3 {
			return nil
		}
		// A signal out before its save is the watcher's to report.
		if pos, err := cps.Checkpoint(context.Background(), snapshotGroup); err != nil || pos != (factum.Position{}) {
			early = append(early, fmt.Sprintf("call %d: checkpoint %s, %v", call, pos, err))
		}
		return errors.New("the disk is on fire")
	})
	checkRecovered(t, st, eng, w, n, per, func() (int, []string) {
		om.mu.Lock()
		defer om.mu.Unlock()
		return om.calls, early
	})
}

// Commands sent one after another to a live engine over the memory store
// are saved by the batch path, their states the executor's, unchecked.
func TestTheMemoryStoreSavesTheExecutorsStatesInBatches(t *testing.T) {
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	eng, om, w := startOwnMemory(t, st, nil)
	ctx := context.Background()
	const n, per = 3, 5
	for v := 1; v <= per; v++ {
		for a := range n {
			id := tallies.ID(fmt.Sprint("t", a))
			if _, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(id, Bump{N: v}), command.Wait(factum.StageSnapshot)); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.stop(t, eng)
	checkFinal(t, st, n, per)
	om.mu.Lock()
	defer om.mu.Unlock()
	if om.saves != 0 || len(om.batches) == 0 || om.encoded == 0 {
		t.Fatalf("%d single saves, %d batches, %d executor states: want batches of the executor's states alone", om.saves, len(om.batches), om.encoded)
	}
}
