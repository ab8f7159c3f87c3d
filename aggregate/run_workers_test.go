package aggregate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// A run's members run on the executor's kept goroutines: a second run
// starts none, and once idle for aggregate.WorkerIdleTime they exit,
// leaving no goroutine behind (the cleanup checks).
func TestRunReusesWorkers(t *testing.T) {
	aggregate.SetArrivalGrace(t, 10*time.Second)
	p := tallyExecutor(t, aggregate.ExecutorConfig{Store: newGroupStore(), Backoff: time.Microsecond})
	w := aggregate.WatchWorkers(t, p)
	mustOpenTally(t, p, "w")
	const n = 5
	for round := range 2 {
		cmds := addTallies("w", n, 1)
		got := make([]factum.Signal, n)
		p.ProcessRun(context.Background(), cmds, nil, func(i int, sig factum.Signal) { got[i] = sig })
		for i, sig := range got {
			if want := 2 + round*n + i; sig.Code != factum.CodeOk || sig.AggregateVersion != want {
				t.Fatalf("round %d, command %d: %s v%d (%s), want Ok v%d", round, i, sig.Code, sig.AggregateVersion, sig.Message, want)
			}
		}
		// The last member runs in the caller's goroutine.
		w.WaitParked(t, n-1)
		if idle, live := w.Counts(); idle != n-1 || live != n-1 {
			t.Fatalf("round %d: %d idle of %d workers, want %d of %d", round, idle, live, n-1, n-1)
		}
	}
}

// A run whose members a middleware holds, occupying every kept worker,
// does not hold up another aggregate's run: its members get goroutines
// of their own.
func TestRunHeldMembersDoNotHoldUpAnotherRun(t *testing.T) {
	aggregate.SetArrivalGrace(t, 10*time.Second)
	var hold sync.Map // command ID -> true: held after its chain's attempt, until release
	release := make(chan struct{})
	var held atomic.Int32
	allHeld := make(chan struct{})
	holding := func(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			sig := next(ctx, cmd)
			if _, ok := hold.Load(cmd.ID); ok {
				if held.Add(1) == aggregate.MaxIdleWorkers {
					close(allHeld)
				}
				<-release
			}
			return sig
		}
	}
	p := tallyExecutor(t, aggregate.ExecutorConfig{Store: newGroupStore(), Middleware: []aggregate.Middleware{holding}, Backoff: time.Microsecond})
	w := aggregate.WatchWorkers(t, p)
	// Before the workers are drained, a failed test releases the held.
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	mustOpenTally(t, p, "a")
	mustOpenTally(t, p, "b")
	// A first run leaves a full pool of idle workers.
	n := aggregate.MaxIdleWorkers + 1
	p.ProcessRun(context.Background(), addTallies("a", n, 1), nil, func(int, factum.Signal) {})
	w.WaitParked(t, n-1)

	// The members of a's second run, on every idle worker, are held once
	// their group (of eventstore.MaxGroup streams) is committed.
	cmds := addTallies("a", n, 1)
	for _, c := range cmds[:n-1] {
		hold.Store(c.ID, true)
	}
	aDone := make(chan struct{})
	go func() {
		p.ProcessRun(context.Background(), cmds, nil, func(int, factum.Signal) {})
		close(aDone)
	}()
	select {
	case <-allHeld:
	case <-time.After(60 * time.Second): // a deadlock, not a timing
		t.Fatalf("%d of a's members held", held.Load())
	}
	if idle, _ := w.Counts(); idle != 0 {
		t.Fatalf("%d idle workers while a's run holds them all", idle)
	}

	bDone := make(chan struct{})
	go func() {
		p.ProcessRun(context.Background(), addTallies("b", 8, 1), nil, func(int, factum.Signal) {})
		close(bDone)
	}()
	select {
	case <-bDone:
	case <-time.After(60 * time.Second): // a deadlock, not a timing
		t.Fatal("b's run waited for a's held members")
	}
	releaseOnce.Do(func() { close(release) })
	<-aDone
}

// StopWorkers ends the kept goroutines at once, without their idle time
// passing, and keeps none from then on: a later run still runs, on
// goroutines that end with it. The engine calls it at Shutdown.
func TestStopWorkersEndsTheKeptGoroutines(t *testing.T) {
	aggregate.SetArrivalGrace(t, 10*time.Second)
	p := tallyExecutor(t, aggregate.ExecutorConfig{Store: newGroupStore(), Backoff: time.Microsecond})
	w := aggregate.WatchWorkers(t, p)
	mustOpenTally(t, p, "s")
	s, ok := p.(interface{ StopWorkers() })
	if !ok {
		t.Fatalf("%T has no StopWorkers: a stopped engine would leave its kept goroutines behind", p)
	}
	const n = 5
	run := func(round int) {
		t.Helper()
		got := make([]factum.Signal, n)
		p.ProcessRun(context.Background(), addTallies("s", n, 1), nil, func(i int, sig factum.Signal) { got[i] = sig })
		for i, sig := range got {
			if want := 2 + round*n + i; sig.Code != factum.CodeOk || sig.AggregateVersion != want {
				t.Fatalf("round %d, command %d: %s v%d (%s), want Ok v%d", round, i, sig.Code, sig.AggregateVersion, sig.Message, want)
			}
		}
	}
	run(0)
	w.WaitParked(t, n-1)
	s.StopWorkers()
	w.WaitExited(t, n-1) // the clock stands still: no idle time passed
	run(1)
	w.WaitExited(t, n-1)
	if idle, live := w.Counts(); idle != 0 || live != 0 {
		t.Fatalf("after StopWorkers a run left %d idle of %d workers, want none", idle, live)
	}
	s.StopWorkers() // a second call is harmless
}
