package engine_test

import (
	"syscall"
	"testing"
	"time"
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
