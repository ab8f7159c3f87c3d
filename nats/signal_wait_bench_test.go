package nats_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/sqlite"
)

// BenchmarkWaitAcrossForProcessed sends the order example's PlaceOrder
// commands at instance b, 16 at a time, each waiting for PROCESSED
// (processed at b, its in-process bus), while instance a holds the
// consumers' leases: the snapshotter, the order summaries' projection
// and the saga handle every stream at a. It reports the wait signals a
// publishes to b per command (the branch signals no wait at b uses) and
// the process's CPU per command. SQLite in a file is the shared store.
func BenchmarkWaitAcrossForProcessed(b *testing.B) {
	ctx := context.Background()
	url := startNATS(b)
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "factum.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	prefix := "bench.signal"
	opt := instanceOptions{summaries: true, leaseTTL: time.Minute, timeout: time.Minute}
	a, sigA := instance(b, db, url, prefix, "a", opt)
	takeLeases(b, a, "sku", 1<<30, "o-first")
	bi, _ := instance(b, db, url, prefix, "b", opt)
	sent0 := sigA.Stats().Sent
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	var wg sync.WaitGroup
	work := make(chan int)
	var failed error
	var mu sync.Mutex
	for range 16 {
		wg.Go(func() {
			for i := range work {
				cmd := factum.NewCommand(order.Orders.ID(fmt.Sprintf("o-%d", i)), order.PlaceOrder{SKU: "sku", Qty: 1})
				if _, err := bi.Gateway().SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed)); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		})
	}
	for i := range b.N {
		work <- i
	}
	close(work)
	wg.Wait()
	// Let a's consumers catch up with the last streams before counting.
	if _, err := bi.Gateway().SendAndWait(ctx, factum.NewCommand(order.Orders.ID("o-last"), order.PlaceOrder{SKU: "sku", Qty: 1}), command.Wait(factum.StageSagaHandled).Within(time.Minute)); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(sigA.Stats().Sent-sent0)/float64(b.N), "signals-a→b/cmd")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/cmd")
}
