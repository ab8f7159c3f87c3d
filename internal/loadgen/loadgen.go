package loadgen

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
)

// Outcome is what a successful operation reports besides succeeding.
type Outcome struct {
	// Duplicate marks an answer replayed from an earlier attempt: the
	// server did nothing new, so it does not count as throughput.
	Duplicate bool
	// ServerTime is the server's own time for the operation when it
	// reports one (Server-Timing), else 0.
	ServerTime time.Duration
}

// Op is one operation; i counts from 0 to Total-1 across all workers, so
// operations can pick distinct targets. A failed operation returns an
// error (wrapped in TransportError when no answer came).
type Op func(ctx context.Context, i int) (Outcome, error)

// Config configures Run.
type Config struct {
	// Concurrency is the number of workers (at least 1).
	Concurrency int
	// Total is the number of operations (at least 1, unless Duration is
	// set: then 0 means no limit).
	Total int
	// Duration, if set, stops starting operations once it has passed
	// since the start: a run of fixed length, as wrk does it.
	Duration time.Duration
	// Progress, if set, is called about every ProgressEvery with the
	// operations finished so far, and once at the end.
	Progress      func(done int, elapsed time.Duration)
	ProgressEvery time.Duration
}

// Report is the outcome of a run. Only new successes count as throughput
// and in the latencies; duplicates and failures are counted apart, the
// failures by cause.
type Report struct {
	Concurrency int `json:"concurrency"`
	// Total is the number of operations that finished.
	Total int `json:"total"`
	// Succeeded counts the operations that did new work.
	Succeeded int `json:"succeeded"`
	// Duplicates counts successful answers replayed from an earlier
	// attempt.
	Duplicates int `json:"duplicates"`
	// Failed counts the operations that failed, and FailuresByCause
	// splits them by Cause.
	Failed          int            `json:"failed"`
	FailuresByCause map[string]int `json:"failuresByCause,omitempty"`
	Seconds         float64        `json:"seconds"`
	// OpsPerSec is Succeeded per second of the run.
	OpsPerSec float64 `json:"opsPerSec"`
	// LatencyMs is the client-side latency of the new successes.
	LatencyMs Latency `json:"latencyMs"`
	// ServerLatencyMs is the server's own time for the new successes
	// that reported one; ServerReported counts them.
	ServerLatencyMs *Latency `json:"serverLatencyMs,omitempty"`
	ServerReported  int      `json:"serverReported,omitempty"`
}

// Latency holds percentiles in milliseconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// tally is one worker's (and then the run's) counts.
type tally struct {
	lat, server []time.Duration
	duplicates  int
	causes      map[string]int
}

func (t *tally) add(o tally) {
	t.lat = append(t.lat, o.lat...)
	t.server = append(t.server, o.server...)
	t.duplicates += o.duplicates
	for c, n := range o.causes {
		t.causes[c] += n
	}
}

// Run runs op cfg.Total times on cfg.Concurrency workers and reports.
// Failed operations are counted by cause and do not stop the run; ctx's
// end does, and Run then returns ctx's error with the report of what
// finished.
func Run(ctx context.Context, cfg Config, op Op) (Report, error) {
	if cfg.Concurrency < 1 || cfg.Total < 0 || cfg.Duration < 0 || (cfg.Total == 0 && cfg.Duration == 0) {
		return Report{}, factum.IllegalArgument("loadgen: concurrency must be at least 1, and total at least 1 unless a duration is set")
	}
	limit := cfg.Total
	if limit == 0 {
		limit = math.MaxInt
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 500 * time.Millisecond
	}
	var (
		next, done atomic.Int64
		mu         sync.Mutex
		all        = tally{causes: map[string]int{}}
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
			local := tally{lat: make([]time.Duration, 0, min(limit/cfg.Concurrency, 1<<14)+1), causes: map[string]int{}}
			for ctx.Err() == nil {
				if cfg.Duration > 0 && time.Since(start) >= cfg.Duration {
					break
				}
				i := int(next.Add(1) - 1)
				if i >= limit {
					break
				}
				t0 := time.Now()
				out, err := op(ctx, i)
				d := time.Since(t0)
				switch {
				case err != nil:
					local.causes[Cause(err)]++
				case out.Duplicate:
					local.duplicates++
				default:
					local.lat = append(local.lat, d)
					if out.ServerTime > 0 {
						local.server = append(local.server, out.ServerTime)
					}
				}
				done.Add(1)
			}
			mu.Lock()
			all.add(local)
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
	rep := summarise(cfg, all, elapsed)
	if err := ctx.Err(); err != nil {
		return rep, errors.Join(errors.New("loadgen: stopped early"), err)
	}
	return rep, nil
}

func summarise(cfg Config, t tally, elapsed time.Duration) Report {
	failed := 0
	for _, n := range t.causes {
		failed += n
	}
	rep := Report{
		Concurrency: cfg.Concurrency, Total: len(t.lat) + t.duplicates + failed,
		Succeeded: len(t.lat), Duplicates: t.duplicates, Failed: failed,
		Seconds: elapsed.Seconds(),
	}
	if len(t.causes) > 0 {
		rep.FailuresByCause = t.causes
	}
	if elapsed > 0 {
		rep.OpsPerSec = float64(len(t.lat)) / elapsed.Seconds()
	}
	rep.LatencyMs = latency(t.lat)
	if len(t.server) > 0 {
		l := latency(t.server)
		rep.ServerLatencyMs, rep.ServerReported = &l, len(t.server)
	}
	return rep
}

func latency(lat []time.Duration) Latency {
	if len(lat) == 0 {
		return Latency{}
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return Latency{
		Mean: ms(sum / time.Duration(len(lat))),
		P50:  ms(Percentile(lat, 50)),
		P95:  ms(Percentile(lat, 95)),
		P99:  ms(Percentile(lat, 99)),
		Max:  ms(lat[len(lat)-1]),
	}
}

// Percentile returns the p-th percentile (nearest rank) of sorted, which
// must be sorted ascending and not empty.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(p/100*float64(len(sorted))+0.999999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}
