package aggregate_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
)

// BenchmarkExecutorProcess measures one command through an executor over
// the in-memory store, 64 aggregates in turn (cache hits), without an
// observer in the context: what the command side costs with no
// instrumentation, which the observer hooks must leave as it is.
func BenchmarkExecutorProcess(b *testing.B) {
	exec, err := order.Inventory.NewExecutor(aggregate.ExecutorConfig{Store: eventstore.NewMemory(), Codec: codec.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	const aggregates = 64
	ids := make([]factum.AggregateID, aggregates)
	for i := range ids {
		ids[i] = order.Inventory.ID(fmt.Sprintf("sku-%d", i))
	}
	ctx := context.Background()
	b.ReportAllocs()
	cpu := processCPU()
	i := 0
	for b.Loop() {
		cmd := factum.NewCommand(ids[i%aggregates], order.Restock{Qty: 1})
		cmd.AllowCreate = true
		if sig := exec.Process(ctx, &cmd); !sig.Succeeded() {
			b.Fatal(sig.Message)
		}
		i++
	}
	if b.N > 0 {
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	}
}

// processCPU is the CPU time the process has spent: on a loaded machine
// steadier per command than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
