package compensation_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/snapshot"
)

func TestOddErrorsAreRecordedNotRefused(t *testing.T) {
	proj := newTotals()
	proj.setFail(func(_ string, call int) error {
		if call == 1 {
			return &factum.Error{Code: "Teapot", Message: "short and stout"}
		}
		return nil
	})
	f := newFixture(t, memoryBackend().open(t), options{totals: proj, config: compensation.Config{
		Classify: func(error) compensation.Recoverability { return "BOGUS" },
	}})
	d := f.execution(f.place("o-1", 1), nil)
	if e := d.Execution; e.Error.Code != factum.CodeInternalServerError || e.Error.Message != "short and stout" ||
		e.Recoverability != compensation.RecoverabilityUnknown {
		t.Fatalf("recorded %+v", e)
	}
}

func TestRetryEndsAtTheExecutionTimeout(t *testing.T) {
	proj := failingTotals(1)
	spec := compensation.RetrySpec{MaxRetries: 3, MinBackoff: time.Minute, ExecutionTimeout: 100 * time.Millisecond}
	f := newFixture(t, memoryBackend().open(t), options{totals: proj, config: compensation.Config{RetrySpec: spec}})
	ev := f.place("o-1", 1)
	f.execution(ev, nil)
	proj.setHold(func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	f.clock.Advance(time.Minute)
	start := time.Now()
	rep := f.runOnce(f.sched, 1, 0, 1)
	if took := time.Since(start); took < 90*time.Millisecond || took > 5*time.Second {
		t.Fatalf("the retry took %v with a 100ms execution timeout", took)
	}
	if a := rep.Attempts[0]; !errors.Is(a.Error, factum.ErrRequestTimeout) {
		t.Fatalf("attempt %+v", a)
	}
	d := f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Retries == 1 })
	if e := d.Execution; e.Status != compensation.StatusFailed || e.Error.Code != factum.CodeRequestTimeout || e.Recoverability != compensation.Recoverable {
		t.Fatalf("after the timed-out retry: %+v", e)
	}
}

func TestDeletedExecutionIsDismissed(t *testing.T) {
	f := newFixture(t, memoryBackend().open(t), options{totals: failingTotals(1)})
	ev := f.place("o-1", 1)
	d := f.execution(ev, nil)
	ctx := context.Background()
	if _, err := f.rt.Gateway().SendAndWait(ctx, factum.NewCommand(d.ID, aggregate.DeleteAggregate{}), processed()); err != nil {
		t.Fatal(err)
	}
	d = f.execution(ev, func(d compensation.Detail) bool { return d.Deleted })
	if items, err := f.svc.List(ctx, compensation.Filter{}, 0); err != nil || len(items) != 0 {
		t.Fatalf("a dismissed execution is listed: %+v, %v", items, err)
	}
	f.clock.Advance(time.Hour)
	f.runOnce(f.sched, 0, 0, 0)
	if _, err := f.svc.ForceRetry(ctx, d.ID.ID); factum.CodeOf(err) != factum.CodeIllegalAccessDeletedAggregate {
		t.Fatalf("force retry of a dismissed execution: %v", err)
	}
}

// gatedSnapshots holds snapshot saves while closed, to make the query
// store lag behind the log.
type gatedSnapshots struct {
	*snapshot.Memory
	mu   sync.Mutex
	open chan struct{}
}

func newGatedSnapshots() *gatedSnapshots {
	g := &gatedSnapshots{Memory: snapshot.NewMemory(), open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gatedSnapshots) Save(ctx context.Context, s snapshot.Snapshot) (bool, error) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	return g.Memory.Save(ctx, s)
}

func (g *gatedSnapshots) hold() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedSnapshots) release() {
	g.mu.Lock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
	g.mu.Unlock()
}

func TestSchedulerPassesOverSnapshotsItIsAheadOf(t *testing.T) {
	snaps := newGatedSnapshots()
	f := newFixture(t, memoryBackend().open(t), options{totals: failingTotals(2), snaps: snaps})
	t.Cleanup(snaps.release) // before the runtime's shutdown drains the snapshotter
	ev := f.place("o-1", 1)
	f.execution(ev, nil)

	snaps.hold()
	f.clock.Advance(compensation.DefaultMinBackoff)
	f.runOnce(f.sched, 1, 0, 1) // the retry fails: version 3, the snapshot stays at 1
	// The snapshot still says due; the scheduler knows better and sends
	// nothing.
	rep := f.runOnce(f.sched, 1, 0, 0)
	if rep.Stale != 1 || len(rep.Attempts) != 0 {
		t.Fatalf("pass over a lagging snapshot: %+v", rep)
	}
	// Another scheduler, without that knowledge, is refused by the store.
	other := f.comp.NewScheduler(compensation.SchedulerConfig{})
	if rep := f.runOnce(other, 1, 0, 0); rep.Skipped != 1 || !errors.Is(rep.Attempts[0].Error, factum.ErrCommandExpectVersionConflict) {
		t.Fatalf("a scheduler that saw nothing: %+v", rep)
	}
	snaps.release()
	f.execution(ev, func(d compensation.Detail) bool { return d.Version == 3 })
	f.runOnce(f.sched, 0, 0, 0)
	f.clock.Advance(2 * compensation.DefaultMinBackoff)
	f.runOnce(f.sched, 1, 1, 0)
	if st := f.sched.Stats(); st.Stale != 1 || st.Prepared != 2 || st.Skipped != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSchedulerRunRetriesUntilStopped(t *testing.T) {
	f := newFixture(t, memoryBackend().open(t), options{totals: failingTotals(1)})
	ev := f.place("o-1", 1)
	f.execution(ev, nil)
	f.clock.Advance(compensation.DefaultMinBackoff)

	ctx, cancel := context.WithCancel(context.Background())
	sched := f.comp.NewScheduler(compensation.SchedulerConfig{Period: 5 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- sched.Run(ctx) }()
	f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Status == compensation.StatusSucceeded })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop with its context")
	}
	if st := sched.Stats(); st.Succeeded != 1 || st.Prepared != 1 {
		t.Fatalf("stats %+v", st)
	}
}
