package aggregate

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Functions handed to the pool one after another run on one goroutine,
// which goes idle between them.
func TestWorkerPoolReusesIdleWorker(t *testing.T) {
	var p workerPool
	w := watchPool(t, &p)
	var wg sync.WaitGroup
	ids := map[uint64]bool{}
	var mu sync.Mutex
	for range 5 {
		p.Go(&wg, func() {
			mu.Lock()
			ids[goroutineID()] = true
			mu.Unlock()
		})
		wg.Wait()
		w.WaitParked(t, 1)
	}
	if len(ids) != 1 {
		t.Errorf("5 functions one after another ran on %d goroutines, want 1", len(ids))
	}
	if idle, live := w.Counts(); idle != 1 || live != 1 {
		t.Errorf("%d idle of %d workers, want 1 of 1", idle, live)
	}
}

// Go never waits for a worker: functions blocked until all of them
// started all start, however many idle workers there were, and the pool
// keeps maxIdleWorkers of their goroutines afterwards.
func TestWorkerPoolNeverWaitsForAWorker(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle int // workers idle before
		n    int // functions blocked at once
	}{
		{"none idle", 0, 3},
		{"fewer idle", 2, 5},
		{"more than the pool keeps", 0, maxIdleWorkers + 8},
		{"full pool, more", maxIdleWorkers, maxIdleWorkers + 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p workerPool
			w := watchPool(t, &p)
			if tc.idle > 0 {
				blockTogether(t, &p, tc.idle)
				w.WaitParked(t, tc.idle)
			}
			blockTogether(t, &p, tc.n)
			// Each worker goes idle or exits.
			waitEither(t, w, tc.n)
			want := min(max(tc.n, tc.idle), maxIdleWorkers)
			if idle, live := w.Counts(); idle != want || live != want {
				t.Errorf("%d idle of %d workers, want %d of %d", idle, live, want, want)
			}
		})
	}
}

// blockTogether runs n functions through p, each blocked until all of
// them started, and returns once they all returned.
func blockTogether(t *testing.T, p *workerPool, n int) {
	t.Helper()
	var started, wg sync.WaitGroup
	started.Add(n)
	release := make(chan struct{})
	for range n {
		p.Go(&wg, func() {
			started.Done()
			<-release
		})
	}
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(deadlock): // a deadlock, not a timing
		t.Fatalf("%d functions did not all start together", n)
	}
	close(release)
	wg.Wait()
}

// waitEither waits until n workers went idle or exited.
func waitEither(t *testing.T, w *poolWatch, n int) {
	t.Helper()
	timeout := time.After(deadlock) // a deadlock, not a timing
	for i := range n {
		select {
		case <-w.parked:
		case <-w.exited:
		case <-timeout:
			t.Fatalf("%d of %d workers went idle or exited", i, n)
		}
	}
}

// An idle worker exits once workerIdleTime passed since it went idle,
// not before, each at its own time; the pool leaves no goroutine behind.
func TestWorkerPoolIdleWorkersExit(t *testing.T) {
	var p workerPool
	w := watchPool(t, &p)
	var wg sync.WaitGroup
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	p.Go(&wg, func() { <-releaseA })
	p.Go(&wg, func() { <-releaseB })
	close(releaseA)
	w.WaitParked(t, 1) // A at 0
	w.Advance(workerIdleTime / 2)
	close(releaseB)
	w.WaitParked(t, 1) // B at half the idle time
	wg.Wait()

	check := func(step string, wantIdle, wantLive int) {
		t.Helper()
		if idle, live := w.Counts(); idle != wantIdle || live != wantLive {
			t.Fatalf("%s: %d idle of %d workers, want %d of %d", step, idle, live, wantIdle, wantLive)
		}
	}
	w.Advance(workerIdleTime/2 - time.Nanosecond)
	check("just before A's idle time is up", 2, 2)
	w.Advance(time.Nanosecond)
	w.WaitExited(t, 1)
	check("A's idle time up", 1, 1)
	w.Advance(workerIdleTime/2 - time.Nanosecond)
	check("just before B's idle time is up", 1, 1)

	// B, taken and idle again, starts its idle time over.
	p.Go(&wg, func() {})
	wg.Wait()
	w.WaitParked(t, 1)
	w.Advance(workerIdleTime - time.Nanosecond)
	check("just before B's second idle time is up", 1, 1)
	w.Advance(time.Nanosecond)
	w.WaitExited(t, 1)
	check("B's idle time up", 0, 0)
	p.mu.Lock()
	sweeping := p.sweeping
	p.mu.Unlock()
	if sweeping {
		t.Error("a sweep is scheduled for an empty pool")
	}
	// The cleanup (Drain) checks the goroutines are gone.
}

// A function calling runtime.Goexit ends its worker and, as wg.Go's
// does, counts in wg: Wait returns.
func TestWorkerPoolGoexit(t *testing.T) {
	var p workerPool
	w := watchPool(t, &p)
	var wg sync.WaitGroup
	p.Go(&wg, runtime.Goexit)
	w.WaitExited(t, 1)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(deadlock): // a deadlock, not a timing
		t.Fatal("wg.Wait did not return after the function's Goexit")
	}
	if idle, live := w.Counts(); idle != 0 || live != 0 {
		t.Errorf("%d idle of %d workers, want none", idle, live)
	}
}

// A job whose function panics leaves its wait group waiting, as wg.Go
// does: the panic goes on, fatal in the worker's goroutine, and a Done
// would let wg.Wait race the crash.
func TestWorkerPoolPanicLeavesWaitGroup(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the function's panic did not go on")
			}
		}()
		job{f: func() { panic("the job's function panicked") }, wg: &wg}.run()
	}()
	// The one Done left: after a Done of run's, it panics (a negative
	// counter).
	wg.Done()
}

// A function's panic is fatal, as in a goroutine wg.Go starts: the
// process dies of it, and wg.Wait does not return first (the child
// would exit 0). A nil function panics alike: it does not pass for the
// sweep's word to exit, which would leave wg.Wait blocked for ever.
func TestWorkerPoolPanicIsFatal(t *testing.T) {
	cases := []struct {
		name string
		f    func()
		want string // in the dying process's output
	}{
		{"panic", func() { panic("the worker's function panicked") }, "the worker's function panicked"},
		{"nil function", nil, "nil pointer dereference"},
	}
	if name := os.Getenv("FACTUM_WORKER_PANIC"); name != "" {
		for _, tc := range cases {
			if tc.name == name {
				var p workerPool
				var wg sync.WaitGroup
				p.Go(&wg, tc.f)
				wg.Wait()
				os.Exit(0)
			}
		}
		t.Fatalf("no case %q", name)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The child's own timeout ends a wg.Wait blocked for ever: a
			// deadlock, not a timing.
			cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerPoolPanicIsFatal$", "-test.timeout="+deadlock.String())
			cmd.Env = append(os.Environ(), "FACTUM_WORKER_PANIC="+tc.name)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the process survived the panic:\n%s", out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("the process died of something else (%v), not of %q:\n%s", err, tc.want, out)
			}
		})
	}
}
