package soak_test

import (
	"context"
	"net/http"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/factum-go/factum/internal/crashtest"
	"github.com/factum-go/factum/internal/serveproc"
	"github.com/factum-go/factum/internal/soak"
)

// DurationEnv sets the soak's length (a Go duration; default 1m, the CI
// length). The long run is FACTUM_SOAK_DURATION=10m.
const DurationEnv = "FACTUM_SOAK_DURATION"

func duration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv(DurationEnv)
	if v == "" {
		return time.Minute
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 10*time.Second {
		t.Fatalf("%s=%q: want a duration of at least 10s", DurationEnv, v)
	}
	return d
}

func median(xs []int) int {
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return s[len(s)/2]
}

// series is one sampled quantity.
type series struct {
	name string
	vals []int
	// factor and slack bound growth: the median of the last third of the
	// load may exceed the median of the first third (after warm-up) by at
	// most factor times it plus slack.
	factor float64
	slack  int
}

func (s *series) check(t *testing.T) {
	t.Helper()
	n := len(s.vals)
	first, last := median(s.vals[:n/3]), median(s.vals[2*n/3:])
	limit := int(float64(first)*s.factor) + s.slack
	t.Logf("%s: first third median %d, last third median %d, max %d (limit %d)", s.name, first, last, maxOf(s.vals), limit)
	if last > limit {
		t.Errorf("%s grows: first third median %d, last third median %d > %d: %v", s.name, first, last, limit, s.vals)
	}
}

func maxOf(xs []int) int {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// A bounded soak: the mixed load against serve on SQLite for the run's
// duration, sampling every 2 s (after a warm-up of a tenth of the run).
// RSS, goroutines, threads and open files must plateau, and once the load
// stops and clients hang up, goroutines and open files must come back to
// near their idle level: a leak of waiters, SSE streams or connections
// shows in either.
func TestSoak(t *testing.T) {
	skipShort(t)
	d := duration(t)
	bin, err := serveproc.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := serveproc.Start(ctx, serveproc.Options{Binary: bin, DataDir: t.TempDir(), Args: []string{"--pprof", "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	if p.DebugURL == "" {
		t.Fatalf("serve did not start its pprof listener:\n%s", p.Output())
	}
	sampler := &http.Client{Timeout: 5 * time.Second}
	c := crashtest.NewClient(p.URL, 30*time.Second)
	skus := []string{"soak-inv-0", "soak-inv-1"}
	for _, sku := range skus {
		res, err := c.Do(ctx, http.MethodPost, "/inventory/"+sku+"/restock", []byte(`{"qty":100000000}`))
		if err != nil || res.Status != 200 {
			t.Fatalf("restock: %v %d %s", err, res.Status, res.Body)
		}
	}
	idle, err := p.Sample(ctx, sampler)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("idle: %+v", idle)

	lctx, stop := context.WithTimeout(ctx, d)
	defer stop()
	done := make(chan *soak.Counts, 1)
	seed := uint64(time.Now().UnixNano())
	t.Logf("soak for %v, seed %d", d, seed)
	go func() { done <- soak.Mix(lctx, c, 12, seed, skus) }()
	warmup := d / 10
	time.Sleep(warmup)
	rss := &series{name: "RSS KiB", factor: 1.5, slack: 30 << 10}
	gor := &series{name: "goroutines", factor: 1.5, slack: 50}
	thr := &series{name: "threads", factor: 1.5, slack: 8}
	fds := &series{name: "open files", factor: 1.5, slack: 20}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for lctx.Err() == nil {
		select {
		case <-lctx.Done():
		case <-tick.C:
			s, err := p.Sample(ctx, sampler)
			if err != nil {
				t.Fatalf("sample: %v\n%s", err, p.Output())
			}
			rss.vals = append(rss.vals, s.RSSKiB)
			gor.vals = append(gor.vals, s.Goroutines)
			thr.vals = append(thr.vals, s.Threads)
			fds.vals = append(fds.vals, s.OpenFiles)
		}
	}
	counts := <-done
	ops, failed, examples := counts.Snapshot()
	t.Logf("%d operations in %v (%.0f/s): %v", counts.Total(), d, float64(counts.Total())/d.Seconds(), ops)
	for kind, n := range failed {
		t.Errorf("%s: %d of %d failed", kind, n, ops[kind])
	}
	for _, e := range examples {
		t.Log("failure: ", e)
	}
	for kind := range ops {
		if ops[kind] == 0 {
			t.Errorf("%s never ran", kind)
		}
	}
	if len(rss.vals) < 6 {
		t.Fatalf("only %d samples", len(rss.vals))
	}
	for _, s := range []*series{rss, gor, thr, fds} {
		s.check(t)
	}

	// Quiet: clients hang up, waits and streams must be gone.
	c.HTTP().CloseIdleConnections()
	var after serveproc.Sample
	deadline := time.Now().Add(30 * time.Second)
	for {
		if after, err = p.Sample(ctx, sampler); err != nil {
			t.Fatal(err)
		}
		if after.Goroutines <= idle.Goroutines+20 && after.OpenFiles <= idle.OpenFiles+10 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("after the load: %+v (idle was %+v)", after, idle)
	if after.Goroutines > idle.Goroutines+20 {
		t.Errorf("goroutines after the load: %d, idle %d: something holds on to finished requests", after.Goroutines, idle.Goroutines)
	}
	if after.OpenFiles > idle.OpenFiles+10 {
		t.Errorf("open files after the load: %d, idle %d", after.OpenFiles, idle.OpenFiles)
	}
	if err := p.Stop(30 * time.Second); err != nil {
		t.Errorf("graceful stop after the soak: %v\n%s", err, p.Output())
	}
}

// skipShort skips the soak under -short; CI runs it (without -short).
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the soak runs a minute or more; not under -short")
	}
}
