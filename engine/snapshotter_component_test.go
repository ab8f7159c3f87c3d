package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/component"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshotter"
)

// wrappedSnapshotter is a snapshotter of one's own: the default one,
// recording what the engine gave it.
type wrappedSnapshotter struct {
	*snapshotter.Component
	mu    sync.Mutex
	types []string
	host  component.Host
	ran   bool
}

func (w *wrappedSnapshotter) Setup(env component.Env) (component.Parts, error) {
	w.mu.Lock()
	for _, t := range env.Types {
		w.types = append(w.types, t.Named().String())
	}
	w.mu.Unlock()
	return w.Component.Setup(env)
}

func (w *wrappedSnapshotter) Attach(h component.Host) error {
	w.mu.Lock()
	w.host = h
	w.mu.Unlock()
	return w.Component.Attach(h)
}

func (w *wrappedSnapshotter) Run(ctx context.Context) error {
	w.mu.Lock()
	w.ran = true
	w.mu.Unlock()
	return w.Component.Run(ctx)
}

func TestConfigSnapshotterReplacesTheDefaultAndSeesEveryType(t *testing.T) {
	j := &journal{}
	extra := aggregate.New[Counter]("test", "extra",
		aggregate.Source(func(c *Counter, e Added) { c.Total += e.N }),
		aggregate.Handle(func(_ context.Context, _ Counter, a Add) ([]any, error) { return []any{Added(a)}, nil }, aggregate.AllowCreate()))
	brings := newProbe("brings", j)
	brings.parts = engine.Parts{Types: []aggregate.Type{extra}}
	brings.running = nil // not run here
	snaps := snapshot.NewMemory()
	own := &wrappedSnapshotter{Component: snapshotter.NewComponent(snapshotter.ComponentConfig{})}
	cfg := engine.Config{Store: eventstore.NewMemory(), SnapshotStore: snaps, Snapshotter: own,
		Components: []engine.Component{setupOnly{brings}}}
	eng, err := engine.New(cfg, counterType(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Shutdown(context.Background()) })
	own.mu.Lock()
	types, host := own.types, own.host
	own.mu.Unlock()
	if len(types) != 2 || types[1] != "test.extra" {
		t.Fatalf("the snapshotter saw types %v, want the engine's and the component's", types)
	}
	if host != engine.Host(eng) {
		t.Fatal("the snapshotter was not attached to the engine")
	}
	for _, id := range []factum.AggregateID{counters.WithID("c1"), extra.ID("e1")} {
		res, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 2}), command.Wait(factum.StageSnapshot))
		if err != nil || res.Function.Processor != engine.SnapshotProcessor {
			t.Fatalf("%s: %+v, %v", id, res, err)
		}
		if s, err := snaps.Load(ctx, id); err != nil || s.Version != 1 {
			t.Fatalf("%s: snapshot %+v, %v", id, s, err)
		}
	}
	if _, err := eng.RegenerateSnapshot(ctx, counters.WithID("c1")); err != nil {
		t.Fatalf("RegenerateSnapshot through the replacement: %v", err)
	}
	own.mu.Lock()
	ran := own.ran
	own.mu.Unlock()
	if !ran {
		t.Fatal("the snapshotter's Run was not called")
	}
}

// setupOnly is a component whose Run returns at once.
type setupOnly struct{ *probe }

func (s setupOnly) Run(context.Context) error { return nil }

func TestDisableSnapshotterSavesNothing(t *testing.T) {
	snaps := snapshot.NewMemory()
	eng, def := newRuntime(t, engine.Config{SnapshotStore: snaps, DisableSnapshotter: true}, nil)
	ctx := context.Background()
	id := def.ID("c1")
	if _, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), processed()); err != nil {
		t.Fatal(err)
	}
	if err := eng.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := snaps.Load(ctx, id); !errors.Is(err, factum.ErrNotFound) {
		t.Fatalf("a snapshot with the snapshotter off: %v", err)
	}
	if eng.Snapshots() != snaps {
		t.Fatal("the snapshot store is not served for reads")
	}
	if _, err := eng.RegenerateSnapshot(ctx, id); factum.CodeOf(err) != factum.CodeIllegalState {
		t.Fatalf("RegenerateSnapshot without a snapshotter: %v, want IllegalState", err)
	}
}

func TestSnapshotterConfigConflictsAreRefused(t *testing.T) {
	own := snapshotter.NewComponent(snapshotter.ComponentConfig{})
	for name, cfg := range map[string]engine.Config{
		"replaced and disabled":    {Snapshotter: own, DisableSnapshotter: true},
		"replaced with a strategy": {Snapshotter: own, SnapshotStrategy: snapshot.VersionOffset(10)},
		"an unknown save mode":     {Snapshotter: snapshotter.NewComponent(snapshotter.ComponentConfig{Saves: 9})},
	} {
		cfg.Store, cfg.SnapshotStore = eventstore.NewMemory(), snapshot.NewMemory()
		if _, err := engine.New(cfg, counterType(nil)); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Errorf("%s: %v, want IllegalArgument", name, err)
		}
	}
}
