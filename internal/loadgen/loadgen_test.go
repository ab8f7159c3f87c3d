package loadgen_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
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
	}, func(_ context.Context, i int) (loadgen.Outcome, error) {
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
			return loadgen.Outcome{}, factum.IllegalState("no")
		}
		return loadgen.Outcome{}, nil
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
	if rep.Total != 1000 || rep.Failed != 100 || rep.Succeeded != 900 || rep.FailuresByCause["IllegalState"] != 100 {
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
	rep, err := loadgen.Run(ctx, loadgen.Config{Concurrency: 2, Total: 1 << 30}, func(context.Context, int) (loadgen.Outcome, error) {
		cancel()
		return loadgen.Outcome{}, nil
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

// Only new successes count as throughput and latency; duplicates and
// failures are counted apart, failures by cause, and a transport failure is
// not filed under a server code.
func TestRunCountsOnlyNewSuccesses(t *testing.T) {
	refused := &loadgen.TransportError{Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	rep, err := loadgen.Run(context.Background(), loadgen.Config{Concurrency: 3, Total: 100}, func(_ context.Context, i int) (loadgen.Outcome, error) {
		switch {
		case i < 50:
			return loadgen.Outcome{}, refused
		case i < 70:
			return loadgen.Outcome{Duplicate: true}, nil
		case i < 75:
			return loadgen.Outcome{}, factum.NewError(factum.CodeCommandExpectVersionConflict, "stale")
		}
		return loadgen.Outcome{ServerTime: 2 * time.Millisecond}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total != 100 || rep.Succeeded != 25 || rep.Duplicates != 20 || rep.Failed != 55 {
		t.Fatalf("report %+v", rep)
	}
	want := map[string]int{"transport: connection refused": 50, "CommandExpectVersionConflict": 5}
	if !maps.Equal(rep.FailuresByCause, want) {
		t.Fatalf("causes %v, want %v", rep.FailuresByCause, want)
	}
	if want := 25 / rep.Seconds; rep.OpsPerSec > want*1.0001 || rep.OpsPerSec < want*0.9999 {
		t.Fatalf("throughput %v, want the 25 successes over %vs", rep.OpsPerSec, rep.Seconds)
	}
	if rep.ServerReported != 25 || rep.ServerLatencyMs == nil || rep.ServerLatencyMs.P50 != 2 {
		t.Fatalf("server latency %+v (%d)", rep.ServerLatencyMs, rep.ServerReported)
	}
}

func TestCause(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{factum.IllegalState("x"), "IllegalState"},
		{fmt.Errorf("wrapped: %w", factum.NewError(factum.CodeTooManyRequests, "busy")), "TooManyRequests"},
		{&loadgen.TransportError{Err: io.ErrUnexpectedEOF}, "transport: connection reset"},
		{&loadgen.TransportError{Err: context.DeadlineExceeded}, "transport: timeout"},
		{&loadgen.TransportError{Err: errors.New("malformed HTTP response")}, "transport: bad answer"},
		{context.Canceled, "canceled"},
		{errors.New("what"), "other"},
	} {
		if got := loadgen.Cause(c.err); got != c.want {
			t.Errorf("Cause(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// A run of fixed length stops starting operations once it has passed.
func TestRunForADuration(t *testing.T) {
	for _, workers := range []int{1, 2, 7} {
		rep, err := loadgen.Run(context.Background(), loadgen.Config{Concurrency: workers, Duration: 50 * time.Millisecond},
			func(context.Context, int) (loadgen.Outcome, error) {
				time.Sleep(time.Millisecond)
				return loadgen.Outcome{}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Total < workers || rep.Succeeded != rep.Total || rep.Seconds < 0.05 {
			t.Fatalf("%d workers: report %+v", workers, rep)
		}
	}
	if _, err := loadgen.Run(context.Background(), loadgen.Config{Concurrency: 1}, nil); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("neither total nor duration: %v", err)
	}
}
