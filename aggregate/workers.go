package aggregate

import (
	"sync"
	"time"

	"github.com/factum-go/factum/eventstore"
)

// maxIdleWorkers bounds the idle goroutines an executor's worker pool
// keeps. A run's members decide in turn for groups of at most
// eventstore.MaxGroup streams, and a dispatcher's runs hold as many
// commands by default (command.DefaultMaxRun): one full run of a hot
// aggregate finds its members' goroutines all kept, run after run. Runs
// of other aggregates at the same moment start goroutines beyond it, as
// without the pool. An idle worker holds its stack (16 KiB once grown
// by a decision of the package's tests), so the bound keeps an
// aggregate type's idle workers near 1 MiB: each type's executor has a
// pool of its own (Registry.NewExecutor routes to one per type).
const maxIdleWorkers = eventstore.MaxGroup

// workerIdleTime is how long a worker of the pool stays idle before it
// exits. Runs of a busy aggregate follow each other a commit's time
// apart (a millisecond or a few), far within it, so that a steady load
// keeps its workers; a second is still short enough that an engine
// gone idle holds no goroutine for long. An engine's Shutdown ends its
// executor's idle workers at once (StopWorkers): they are told to exit
// and do, without waiting for their idle time. A load with runs more
// than a second apart gains nothing to speak of from kept stacks.
const workerIdleTime = time.Second

// workerPool runs functions each in a goroutine of its own, on goroutines
// it keeps between them. It exists for the members of a run (ProcessRun),
// which start together and decide in turn: a fresh goroutine's stack
// grows, by copies, on its way to a decision (mostly at the prologue of
// Definition.decide), and those copies lie on the run's critical path.
// CPU profiles of the nats package's BenchmarkContendedAggregate (memory
// store) put runtime.newstack and copystack in the members' goroutines
// at 0.3 to 0.5 s of 4.2 to 5.0 s of CPU on one instance and 0.7 s of
// 8.2 to 9.3 s on two, and at 0.02 s at most on kept ones: a kept
// goroutine keeps its grown stack (until a garbage collection shrinks an
// idle one by half).
//
// Go never waits for a worker: with none idle, it starts a goroutine,
// so that a function blocked (a member held in a middleware) never holds
// up another. At most maxIdleWorkers workers wait idle; one finding the
// pool full exits, and one idle for workerIdleTime exits too, so that an
// idle executor keeps no goroutine for ever. The zero value is an empty
// pool, ready to use; it needs no closing.
//
// A function runs with the goroutine's state a kept goroutine carries
// from one function to the next: the pprof labels of the goroutine that
// started it (not of the one calling Go), and whatever an earlier
// function left set on it (pprof.SetGoroutineLabels without a restore,
// runtime.LockOSThread without an unlock). Nothing in this module sets
// either; a middleware using pprof.Do restores the labels it set.
type workerPool struct {
	mu sync.Mutex
	// idle holds the idle workers, the one idle longest first: a worker
	// is taken from the end, where the stack was used last, and those at
	// the start exit when their idle time is up.
	idle []*worker
	// sweeping: a sweep is scheduled, as it always is while there are
	// idle workers.
	sweeping bool
	// live counts the pool's goroutines, idle or running a function.
	live int
	// stopped: stop was called; no worker goes idle any more.
	stopped bool
	// hooks, when set (by a test, before the pool's first use), give the
	// pool its time and tell of its workers' idling and exits.
	hooks *poolHooks
}

// poolHooks are a test's clock over a worker pool, and its view of the
// workers' lives.
type poolHooks struct {
	now       func() time.Time
	afterFunc func(d time.Duration, f func()) // calls f in a goroutine of its own once d passed
	parked    func()                          // a worker went idle
	exited    func()                          // a worker's goroutine is ending
}

// worker is a goroutine of the pool; it runs the jobs handed to it
// while it is idle.
type worker struct {
	// jobs holds the next job: at most one is handed to an idle worker,
	// so that handing it over never blocks. The zero job (no wait group)
	// tells it to exit.
	jobs chan job
	// since is when it went idle.
	since time.Time
}

// job is a function to run and the wait group awaiting it. A job Go
// hands over always has its wait group, even with a nil function, which
// is run (and panics) as wg.Go would: only the zero job, a sweep's, ends
// a worker.
type job struct {
	f  func()
	wg *sync.WaitGroup
}

// Go calls f in a goroutine of its own, as wg.Go(f) does: an idle worker
// of the pool when there is one, else a goroutine it starts, which joins
// the pool afterwards. Like wg.Go, it adds one to wg, done when f
// returned or called runtime.Goexit; a panic of f is fatal, without
// wg.Wait returning.
func (p *workerPool) Go(wg *sync.WaitGroup, f func()) {
	wg.Add(1)
	j := job{f: f, wg: wg}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.jobs <- j
		return
	}
	p.live++
	p.mu.Unlock()
	go p.work(j)
}

// work runs j, then each job handed to the worker while idle, until the
// pool has no room for it or its idle time is up.
func (p *workerPool) work(j job) {
	defer p.exit()
	w := &worker{jobs: make(chan job, 1)}
	for j.wg != nil {
		j.run()
		if !p.park(w) {
			return
		}
		j = <-w.jobs
	}
}

// run calls the job's function and tells its wait group, as wg.Go does:
// after a panic it does not, so that a waiter does not race the crash
// (the panic goes on, and it is fatal in a worker's goroutine).
func (j job) run() {
	defer func() {
		if x := recover(); x != nil {
			panic(x)
		}
		j.wg.Done()
	}()
	j.f()
}

// park makes w idle, unless maxIdleWorkers are: it reports whether w
// went idle, and schedules a sweep when none is.
func (p *workerPool) park(w *worker) bool {
	p.mu.Lock()
	if p.stopped || len(p.idle) >= maxIdleWorkers {
		p.mu.Unlock()
		return false
	}
	w.since = p.now()
	p.idle = append(p.idle, w)
	if !p.sweeping {
		p.sweeping = true
		p.afterFunc(workerIdleTime, p.sweep)
	}
	h := p.hooks
	p.mu.Unlock()
	if h != nil && h.parked != nil {
		h.parked()
	}
	return true
}

// sweep tells the workers idle for workerIdleTime to exit, and schedules
// itself again for the one idle longest after them, if any.
func (p *workerPool) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].since) >= workerIdleTime {
		p.idle[n].jobs <- job{}
		n++
	}
	k := copy(p.idle, p.idle[n:])
	clear(p.idle[k:])
	p.idle = p.idle[:k]
	if k == 0 {
		p.sweeping = false
		return
	}
	p.afterFunc(workerIdleTime-now.Sub(p.idle[0].since), p.sweep)
}

// exit counts a worker's goroutine out, whether it returns, its job
// panicked or called runtime.Goexit.
func (p *workerPool) exit() {
	p.mu.Lock()
	p.live--
	h := p.hooks
	p.mu.Unlock()
	if h != nil && h.exited != nil {
		h.exited()
	}
}

// now is the pool's time: the test's clock, if any.
func (p *workerPool) now() time.Time {
	if p.hooks != nil {
		return p.hooks.now()
	}
	return time.Now()
}

// afterFunc calls f once d passed, by the test's clock, if any.
func (p *workerPool) afterFunc(d time.Duration, f func()) {
	if p.hooks != nil {
		p.hooks.afterFunc(d, f)
		return
	}
	time.AfterFunc(d, f)
}

// stop tells the idle workers to exit and keeps no worker from then on:
// each function handed to Go after it runs in a goroutine that ends with
// it, as wg.Go's does. The engine stops its executor's pools at Shutdown,
// so that a stopped engine leaves no goroutine of its own behind.
func (p *workerPool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for i, w := range p.idle {
		w.jobs <- job{}
		p.idle[i] = nil
	}
	p.idle = p.idle[:0]
}

// StopWorkers ends the goroutines the executor keeps for the members of
// runs (see ProcessRun) and keeps none from then on: runs still work,
// each member in a goroutine that ends with it. The engine calls it at
// Shutdown, once its lanes have stopped, so that a stopped engine leaves
// no idle goroutine behind (one kept goroutine would otherwise live up to
// a second after Shutdown). It is safe to call more than once.
func (p *processor[S]) StopWorkers() { p.workers.stop() }

// StopWorkers implements the executor's StopWorkers for every aggregate
// type it routes to.
func (r router) StopWorkers() {
	for _, e := range r {
		if s, ok := e.(interface{ StopWorkers() }); ok {
			s.StopWorkers()
		}
	}
}
