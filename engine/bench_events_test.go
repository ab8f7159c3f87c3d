package engine_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/snapshot"
)

// benchBranch sends commands from 64 parallel callers (benchCallers) over
// 10,000 aggregates and waits for stage.
func benchBranch(b *testing.B, cfg engine.Config, stage factum.CommandStage) {
	rt, def := newRuntime(b, cfg, nil)
	gw := rt.Gateway()
	ctx := context.Background()
	ids := benchIDs(def, "bench-")
	plan := command.Wait(stage)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	runCallers(b, benchCallers, func(i uint64) error {
		_, err := gw.SendAndWait(ctx, factum.NewCommand(ids[i%benchAggregates], Add{N: 1}), plan)
		return err
	})
	cpu.reportCommands(b)
}

// BenchmarkSendAndWaitSnapshot: PROCESSED, then the snapshotter folds the
// stream into the in-memory snapshot store (strategy All) and signals.
func BenchmarkSendAndWaitSnapshot(b *testing.B) {
	benchBranch(b, engine.Config{SnapshotStore: snapshot.NewMemory()}, factum.StageSnapshot)
}

// BenchmarkSendAndWaitProjected: PROCESSED, then one in-memory projection
// handles the event and signals.
func BenchmarkSendAndWaitProjected(b *testing.B) {
	proj := &totals{}
	benchBranch(b, engine.Config{Processors: []*event.Processor{proj.processor(b, "totals", nil)}}, factum.StageProjected)
}

// BenchmarkSendAndWaitSnapshotOneCaller: one caller sends command after
// command over 10,000 aggregates and waits for SNAPSHOT, so the
// snapshotter keeps up and waits at the log's end once per command: its
// cpu-ns/op shows what that wait costs.
func BenchmarkSendAndWaitSnapshotOneCaller(b *testing.B) {
	rt, def := newRuntime(b, engine.Config{SnapshotStore: snapshot.NewMemory()}, nil)
	gw := rt.Gateway()
	ctx := context.Background()
	ids := benchIDs(def, "one-")
	plan := command.Wait(factum.StageSnapshot)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	runOneCaller(b, func(i uint64) error {
		_, err := gw.SendAndWait(ctx, factum.NewCommand(ids[i%benchAggregates], Add{N: 1}), plan)
		return err
	})
	cpu.reportCommands(b)
}
