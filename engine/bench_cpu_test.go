package engine_test

import (
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// cpuClock measures the CPU time (user + system, all threads) the test
// process spends during a benchmark. The machine the benchmarks run on is
// shared, so wall-clock ns/op swings with other people's load; CPU time per
// command is the steadier figure, and cores / cpu-ns/op bounds the
// throughput the code can reach on an idle machine.
type cpuClock struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startCPU starts the clock; call it right after b.ResetTimer.
func startCPU() cpuClock { return cpuClock{start: processCPU()} }

// report adds the cpu-ns/op metric.
func (c cpuClock) report(b *testing.B) {
	b.Helper()
	if b.N > 0 {
		b.ReportMetric(float64(processCPU()-c.start)/float64(b.N), "cpu-ns/op")
	}
}

// reportCommands adds the cpu-ns/op and cmds/s metrics of a benchmark
// whose operation is a command.
func (c cpuClock) reportCommands(b *testing.B) {
	b.Helper()
	c.report(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
}

// benchAggregates is how many aggregates the benchmarks spread their
// commands over.
const benchAggregates = 10_000

// benchIDs returns the ids of benchAggregates aggregates of def, named
// prefix followed by a number.
func benchIDs(def *aggregate.Definition[Counter], prefix string) []factum.AggregateID {
	ids := make([]factum.AggregateID, benchAggregates)
	for i := range ids {
		ids[i] = def.ID(prefix + strconv.Itoa(i))
	}
	return ids
}

// benchCallers is how many callers the parallel benchmarks run, as the
// documented figures say.
const benchCallers = 64

// runOneCaller calls send from the benchmark's own loop (b.Loop), with the
// call's number (1-based): runCallers for one caller. An error fails the
// benchmark.
func runOneCaller(b *testing.B, send func(i uint64) error) {
	b.Helper()
	var i uint64
	for b.Loop() {
		i++
		if err := send(i); err != nil {
			b.Fatal(err)
		}
	}
}

// runCallers calls send b.N times in all from exactly callers goroutines,
// with the call's number (1-based): RunParallel starts parallelism ×
// GOMAXPROCS goroutines, which is the count asked for only when
// GOMAXPROCS divides it. The first error fails the benchmark.
func runCallers(b *testing.B, callers int, send func(i uint64) error) {
	b.Helper()
	var next atomic.Uint64
	var failed atomic.Bool
	var wg sync.WaitGroup
	total := uint64(b.N)
	for range callers {
		wg.Go(func() {
			for !failed.Load() {
				i := next.Add(1)
				if i > total {
					return
				}
				if err := send(i); err != nil {
					if !failed.Swap(true) {
						b.Error(err)
					}
					return
				}
			}
		})
	}
	wg.Wait()
}
