package engine_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
)

// BenchmarkSendAndWaitProcessedOneAggregate: every command goes to one
// aggregate, so they run one at a time on one lane.
func BenchmarkSendAndWaitProcessedOneAggregate(b *testing.B) {
	rt, def := newRuntime(b, engine.Config{}, nil)
	gw := rt.Gateway()
	ctx := context.Background()
	id := def.ID("bench-one")
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	runOneCaller(b, func(uint64) error {
		_, err := gw.SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), processed())
		return err
	})
	cpu.reportCommands(b)
}

// BenchmarkSendAndWaitProcessedParallel: 64 callers (benchCallers
// goroutines, whatever GOMAXPROCS is) over 10,000 aggregates.
func BenchmarkSendAndWaitProcessedParallel(b *testing.B) {
	benchBranch(b, engine.Config{}, factum.StageProcessed)
}

// BenchmarkSend: SENT only, over 10,000 aggregates; the lanes process the
// commands concurrently with the benchmark.
func BenchmarkSend(b *testing.B) {
	rt, def := newRuntime(b, engine.Config{}, nil)
	gw := rt.Gateway()
	ctx := context.Background()
	ids := benchIDs(def, "send-")
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	runOneCaller(b, func(i uint64) error {
		_, err := gw.Send(ctx, factum.NewCommand(ids[i%benchAggregates], Add{N: 1}))
		return err
	})
	cpu.reportCommands(b)
}

var _ = command.Wait
