package loadgen_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/loadgen"
)

func TestPercentile(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i))
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50}, {95, 95}, {99, 99}, {100, 100}, {0, 1}, {1, 1}} {
		if got := loadgen.Percentile(s, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := loadgen.Percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("single = %v", got)
	}
}

// Every index runs exactly once, failures are counted by code, and the
// concurrency is respected.
func TestRun(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]int{}
	var inFlight, peak atomic.Int64
	var progressCalls atomic.Int64
	rep, err := loadgen.Run(context.Background(), loadgen.Config{
		Concurrency: 8, Total: 1000, ProgressEvery: time.Millisecond,
		Progress: func(int, time.Duration) { progressCalls.Add(1) },
	}, func(_ context.Context, i int) error {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		defer inFlight.Add(-1)
		mu.Lock()
		seen[i]++
		mu.Unlock()
		if i%10 == 0 {
			return factum.IllegalState("no")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1000 {
		t.Fatalf("%d distinct indexes, want 1000", len(seen))
	}
	for i, n := range seen {
		if n != 1 || i < 0 || i >= 1000 {
			t.Fatalf("index %d ran %d times", i, n)
		}
	}
	if rep.Total != 1000 || rep.Failed != 100 || rep.Succeeded != 900 || rep.ErrorsByCode["IllegalState"] != 100 {
		t.Fatalf("report %+v", rep)
	}
	if peak.Load() > 8 {
		t.Fatalf("peak concurrency %d > 8", peak.Load())
	}
	if rep.LatencyMs.Max < rep.LatencyMs.P99 || rep.LatencyMs.P99 < rep.LatencyMs.P50 || rep.OpsPerSec <= 0 {
		t.Fatalf("inconsistent figures %+v", rep.LatencyMs)
	}
	if progressCalls.Load() < 1 {
		t.Fatal("progress never reported")
	}
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rep, err := loadgen.Run(ctx, loadgen.Config{Concurrency: 2, Total: 1 << 30}, func(context.Context, int) error {
		cancel()
		return nil
	})
	if err == nil || rep.Total > 2 {
		t.Fatalf("err %v, %d ops; want a stop after at most 2", err, rep.Total)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	if _, err := loadgen.Run(context.Background(), loadgen.Config{}, nil); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("err %v, want IllegalArgument", err)
	}
}
