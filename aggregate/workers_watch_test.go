package aggregate

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// MaxIdleWorkers is the most idle workers an executor keeps.
const MaxIdleWorkers = maxIdleWorkers

// WorkerIdleTime is how long an executor's worker stays idle before it
// exits.
const WorkerIdleTime = workerIdleTime

// WorkerWatch is a test's clock over an executor's worker pool, and its
// view of the pool's workers.
type WorkerWatch struct{ *poolWatch }

// WatchWorkers gives the worker pool of e (an executor NewExecutor made)
// the test's clock, before e runs anything. When the test ends, the
// pool's idle workers are expired and their goroutines checked gone.
func WatchWorkers(t testing.TB, e Executor) WorkerWatch {
	t.Helper()
	return WorkerWatch{watchPool(t, e.(interface{ workerPool() *workerPool }).workerPool())}
}

func (p *processor[S]) workerPool() *workerPool { return &p.workers }

// poolWatch is a test's clock over a worker pool: time passes when the
// test says (Advance), and a timer's function runs in the test's
// goroutine then. It counts the workers going idle and exiting.
type poolWatch struct {
	p  *workerPool
	mu sync.Mutex
	at time.Time
	// timers are the functions afterFunc scheduled, with their times.
	timers []fakeTimer
	// gone are the goroutine IDs of the workers that exited.
	gone []uint64

	parked, exited chan struct{}
}

type fakeTimer struct {
	at time.Time
	f  func()
}

// deadlock is how long a wait goes before the test calls it a deadlock:
// no timing is asserted, a wait that ends at all passes.
const deadlock = 60 * time.Second

func watchPool(t testing.TB, p *workerPool) *poolWatch {
	t.Helper()
	w := &poolWatch{p: p, at: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		parked: make(chan struct{}, 1<<12), exited: make(chan struct{}, 1<<12)}
	p.hooks = &poolHooks{
		now:       w.now,
		afterFunc: w.afterFunc,
		parked:    func() { w.parked <- struct{}{} },
		exited: func() {
			w.mu.Lock()
			w.gone = append(w.gone, goroutineID())
			w.mu.Unlock()
			w.exited <- struct{}{}
		},
	}
	t.Cleanup(func() { w.Drain(t) })
	return w
}

func (w *poolWatch) now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.at
}

func (w *poolWatch) afterFunc(d time.Duration, f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timers = append(w.timers, fakeTimer{w.at.Add(d), f})
}

// Advance moves the clock d on and runs the timers then due, in the
// caller's goroutine.
func (w *poolWatch) Advance(d time.Duration) {
	w.mu.Lock()
	w.at = w.at.Add(d)
	var due []func()
	w.timers = slices.DeleteFunc(w.timers, func(tm fakeTimer) bool {
		if tm.at.After(w.at) {
			return false
		}
		due = append(due, tm.f)
		return true
	})
	w.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// WaitParked waits until n more workers went idle.
func (w *poolWatch) WaitParked(t testing.TB, n int) {
	t.Helper()
	waitN(t, w.parked, n, "went idle")
}

// WaitExited waits until n more workers exited.
func (w *poolWatch) WaitExited(t testing.TB, n int) {
	t.Helper()
	waitN(t, w.exited, n, "exited")
}

func waitN(t testing.TB, ch <-chan struct{}, n int, what string) {
	t.Helper()
	timeout := time.After(deadlock) // a deadlock, not a timing
	for i := range n {
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("%d of %d workers %s", i, n, what)
		}
	}
}

// Counts returns the pool's idle workers and its goroutines, idle or
// running a function.
func (w *poolWatch) Counts() (idle, live int) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return len(w.p.idle), w.p.live
}

// Drain waits for every worker to go idle or exit, lets their idle time
// pass, waits for the pool's goroutines to exit, and checks that none is
// left running. The functions handed to the pool must have returned.
func (w *poolWatch) Drain(t testing.TB) {
	t.Helper()
	timeout := time.After(deadlock) // a deadlock, not a timing
	// A worker whose function returned is on its way to going idle or
	// exiting.
	for idle, live := w.Counts(); idle != live; idle, live = w.Counts() {
		select {
		case <-timeout:
			t.Fatalf("%d of %d workers idle: the pool's functions did not return", idle, live)
		default:
			runtime.Gosched()
		}
	}
	w.Advance(workerIdleTime)
	for {
		if _, live := w.Counts(); live == 0 {
			break
		}
		select {
		case <-w.exited:
		case <-timeout:
			_, live := w.Counts()
			t.Fatalf("%d workers left after their idle time", live)
		}
	}
	w.mu.Lock()
	gone := slices.Clone(w.gone)
	w.mu.Unlock()
	// An exited worker's goroutine returns right after it counted itself
	// out: it leaves the goroutine list at once, or after a yield.
	for !noneRunning(gone) {
		select {
		case <-timeout:
			t.Fatal("a worker's goroutine runs on after it exited")
		default:
			runtime.Gosched()
		}
	}
}

// noneRunning reports whether no goroutine of ids is in the list of
// goroutines.
func noneRunning(ids []uint64) bool {
	buf := make([]byte, 1<<22)
	all := buf[:runtime.Stack(buf, true)]
	for _, id := range ids {
		if bytes.Contains(all, fmt.Appendf(nil, "goroutine %d [", id)) {
			return false
		}
	}
	return true
}

// goroutineID returns the calling goroutine's ID, from its stack's
// header.
func goroutineID() uint64 {
	var buf [64]byte
	b := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	b, _, _ = bytes.Cut(b, []byte(" "))
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic(fmt.Sprintf("goroutine ID: %v", err))
	}
	return id
}
