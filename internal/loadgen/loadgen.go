package loadgen

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
)

// Op is one operation; i counts from 0 to Total-1 across all workers, so
// operations can pick distinct targets.
type Op func(ctx context.Context, i int) error

// Config configures Run.
type Config struct {
	// Concurrency is the number of workers (at least 1).
	Concurrency int
	// Total is the number of operations (at least 1).
	Total int
	// Progress, if set, is called about every ProgressEvery with the
	// operations finished so far, and once at the end.
	Progress      func(done int, elapsed time.Duration)
	ProgressEvery time.Duration
}

// Report is the outcome of a run. Latencies are of successful and failed
// operations alike.
type Report struct {
	Concurrency  int            `json:"concurrency"`
	Total        int            `json:"total"`
	Succeeded    int            `json:"succeeded"`
	Failed       int            `json:"failed"`
	ErrorsByCode map[string]int `json:"errorsByCode,omitempty"`
	Seconds      float64        `json:"seconds"`
	OpsPerSec    float64        `json:"opsPerSec"`
	LatencyMs    Latency        `json:"latencyMs"`
}

// Latency holds percentiles in milliseconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Run runs op cfg.Total times on cfg.Concurrency workers and reports.
// Failed operations are counted by their factum code and do not stop the
// run; ctx's end does, and Run then returns ctx's error with the report of
// what finished.
func Run(ctx context.Context, cfg Config, op Op) (Report, error) {
	if cfg.Concurrency < 1 || cfg.Total < 1 {
		return Report{}, factum.IllegalArgument("loadgen: concurrency and total must be at least 1")
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 500 * time.Millisecond
	}
	var (
		next, done atomic.Int64
		mu         sync.Mutex
		lat        = make([]time.Duration, 0, min(cfg.Total, 1<<16))
		codes      = map[string]int{}
		wg         sync.WaitGroup
	)
	start := time.Now()
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		if cfg.Progress == nil {
			return
		}
		tick := time.NewTicker(cfg.ProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				cfg.Progress(int(done.Load()), time.Since(start))
			case <-stopProgress:
				return
			}
		}
	}()
	for range cfg.Concurrency {
		wg.Go(func() {
			// Grow as results come: a run may stop long before Total
			// (cancellation), and Total may be huge.
			local := make([]time.Duration, 0, min(cfg.Total/cfg.Concurrency+1, 1<<14))
			localCodes := map[string]int{}
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= cfg.Total {
					break
				}
				t0 := time.Now()
				err := op(ctx, i)
				local = append(local, time.Since(t0))
				if err != nil {
					localCodes[string(factum.CodeOf(err))]++
				}
				done.Add(1)
			}
			mu.Lock()
			lat = append(lat, local...)
			for c, n := range localCodes {
				codes[c] += n
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopProgress)
	<-progressDone
	if cfg.Progress != nil {
		cfg.Progress(int(done.Load()), elapsed)
	}
	rep := summarise(cfg, lat, codes, elapsed)
	if err := ctx.Err(); err != nil {
		return rep, errors.Join(errors.New("loadgen: stopped early"), err)
	}
	return rep, nil
}

func summarise(cfg Config, lat []time.Duration, codes map[string]int, elapsed time.Duration) Report {
	failed := 0
	for _, n := range codes {
		failed += n
	}
	rep := Report{
		Concurrency: cfg.Concurrency, Total: len(lat), Succeeded: len(lat) - failed, Failed: failed,
		Seconds: elapsed.Seconds(),
	}
	if len(codes) > 0 {
		rep.ErrorsByCode = codes
	}
	if elapsed > 0 {
		rep.OpsPerSec = float64(len(lat)) / elapsed.Seconds()
	}
	if len(lat) == 0 {
		return rep
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	rep.LatencyMs = Latency{
		Mean: ms(sum / time.Duration(len(lat))),
		P50:  ms(Percentile(lat, 50)),
		P95:  ms(Percentile(lat, 95)),
		P99:  ms(Percentile(lat, 99)),
		Max:  ms(lat[len(lat)-1]),
	}
	return rep
}

// Percentile returns the p-th percentile (nearest rank) of sorted, which
// must be sorted ascending and not empty.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(p/100*float64(len(sorted))+0.999999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}
