package snapshotter_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/memory"
)

// In memory the snapshotter saves the executor's state after whatever the
// store holds: the snapshot keeps the first operator and time of the
// aggregate's first stream whether the stored snapshot it follows was
// folded from the log (streams appended with no snapshotter running, so
// with no state reported), saved from an executor's state, or repaired;
// every SNAPSHOT signal follows its save (the watcher checks).
func TestTheExecutorsStatesKeepTheStoredFirstFields(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	id := tallies.ID("first-fields")
	send := func(t *testing.T, eng *engine.Engine, owner string, n int, stage factum.CommandStage) {
		t.Helper()
		// Streams a few milliseconds apart, so that a snapshot that took
		// a later stream's time as its first would show it.
		time.Sleep(3 * time.Millisecond)
		c := factum.NewCommand(id, Bump{N: n})
		c.OwnerID = owner
		if _, err := eng.Gateway().SendAndWait(ctx, c, command.Wait(stage)); err != nil {
			t.Fatal(err)
		}
	}
	// Two streams with no snapshotter: nothing is stored.
	bare, err := engine.New(engine.Config{Storage: st, DisableSnapshotter: true}, tallies)
	if err != nil {
		t.Fatal(err)
	}
	if err := bare.Start(ctx); err != nil {
		t.Fatal(err)
	}
	send(t, bare, "alice", 1, factum.StageProcessed)
	send(t, bare, "alice", 2, factum.StageProcessed)
	if err := bare.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// The engine's default snapshotter over the store itself (a wrapper
	// would not have the store's own SaveEncodedNext).
	qs, err := st.SnapshotStore(ctx, "snapb")
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{store: qs, got: map[factum.AggregateID][]int{}}
	eng := enginetest.Start(t, engine.Config{Storage: st,
		Signals: func(local command.Sink) (command.Sink, error) { w.local = local; return w, nil }}, tallies)
	first, err := st.EventStore(ctx, "snapb")
	if err != nil {
		t.Fatal(err)
	}
	history, err := first.Load(ctx, id, 1, 1)
	if err != nil || len(history) != 1 {
		t.Fatalf("version 1: %d streams, %v", len(history), err)
	}
	steps := []struct {
		name    string
		do      func(t *testing.T)
		owner   string
		total   int
		version int
	}{
		{"after snapshots folded from the log", func(t *testing.T) { send(t, eng, "alice", 3, factum.StageSnapshot) }, "alice", 6, 3},
		{"the executor's state", func(t *testing.T) { send(t, eng, "alice", 4, factum.StageSnapshot) }, "alice", 10, 4},
		{"repaired", func(t *testing.T) {
			if _, err := eng.RegenerateSnapshot(ctx, id); err != nil {
				t.Fatal(err)
			}
		}, "alice", 10, 4},
		{"the executor's state after the repair", func(t *testing.T) { send(t, eng, "alice", 5, factum.StageSnapshot) }, "alice", 15, 5},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do(t)
			snap, got := loadTally(t, qs, id)
			if snap.Version != s.version || got.Total != s.total || snap.Operator != s.owner {
				t.Fatalf("stored v%d total %d by %q; want v%d total %d by %q", snap.Version, got.Total, snap.Operator, s.version, s.total, s.owner)
			}
			if snap.FirstOperator != "alice" || !snap.FirstEventTime.Equal(history[0].CreateTime.Truncate(time.Millisecond)) {
				t.Fatalf("first operator %q at %v; want alice at %v", snap.FirstOperator, snap.FirstEventTime, history[0].CreateTime)
			}
		})
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.bad) > 0 {
		t.Fatalf("signals: %v", w.bad)
	}
}
