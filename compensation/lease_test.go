package compensation_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/snapshot"
)

// leaseCase checks that schedulers sharing one event store retry each of
// n due executions exactly once, never two at a time: it records n
// failures through the fixtures (each consumer fails once per order),
// repairs the projection, and runs every scheduler in a loop until all
// executions succeeded.
func leaseCase(t *testing.T, n int, fixtures []*fixture, schedulers []*compensation.Scheduler) {
	t.Helper()
	f := fixtures[0]
	proj := f.totals
	proj.setFail(func(string, int) error { return errBoom })
	evs := make([]string, n)
	for i := range evs {
		evs[i] = f.place(fmt.Sprintf("o-%03d", i), i+1)
	}
	for _, ev := range evs {
		// Every instance's consumer delivered the stream and recorded its
		// failure before the retries start.
		f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Failures == len(fixtures) })
	}
	before := make([]int, n)
	for i := range evs {
		_, _, before[i] = proj.get(fmt.Sprintf("o-%03d", i))
	}
	proj.setFail(nil)
	proj.setHold(func(context.Context) error { time.Sleep(time.Millisecond); return nil }) // widen the race window
	f.clock.Advance(compensation.DefaultMinBackoff)

	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, len(schedulers))
	for _, s := range schedulers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if _, err := s.RunOnce(ctx); err != nil {
					errs <- err
					return
				}
				c, err := f.svc.Counts(ctx)
				if err != nil {
					errs <- err
					return
				}
				if c.Succeeded == int64(n) {
					return
				}
			}
			errs <- fmt.Errorf("not every execution succeeded within the deadline")
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	proj.mu.Lock()
	overlaps := proj.overlaps
	proj.mu.Unlock()
	if overlaps != 0 {
		t.Errorf("%d retries ran while another retry of the same execution was running", overlaps)
	}
	for i := range evs {
		id := fmt.Sprintf("o-%03d", i)
		qty, applied, calls := proj.get(id)
		if qty != i+1 || applied != 1 || calls-before[i] != 1 {
			t.Errorf("%s: qty %d, applied %d times, retried %d times", id, qty, applied, calls-before[i])
		}
	}
	var total compensation.Stats
	for _, s := range schedulers {
		st := s.Stats()
		total.Prepared += st.Prepared
		total.Succeeded += st.Succeeded
		total.Skipped += st.Skipped
		total.Errors += st.Errors
	}
	if total.Prepared != int64(n) || total.Succeeded != int64(n) || total.Errors != 0 {
		t.Errorf("schedulers' totals %+v, want %d prepared and succeeded", total, n)
	}
	t.Logf("%d executions: %+v", n, total)
}

func TestTwoSchedulersNeverRetryTheSameExecutionConcurrently(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		f := newFixture(t, b.open(t), options{})
		cfg := compensation.SchedulerConfig{BatchSize: 16, Concurrency: 4}
		leaseCase(t, 60, []*fixture{f}, []*compensation.Scheduler{f.comp.NewScheduler(cfg), f.comp.NewScheduler(cfg)})
	})
}

// TestTwoInstancesShareOneStore runs two instances (runtimes, each with its
// own compensation, consumers and scheduler) over one database, as two
// processes would, with a shared snapshot store as their query store.
func TestTwoInstancesShareOneStore(t *testing.T) {
	for _, b := range []backend{sqliteBackend(), postgresBackend()} {
		t.Run(b.name, func(t *testing.T) {
			first := b.open(t)
			clk, proj, snaps := newClock(), newTotals(), snapshot.NewMemory()
			a := newFixture(t, first, options{clock: clk, totals: proj, snaps: snaps})
			bb := newFixture(t, b.reopen(t), options{clock: clk, totals: proj, snaps: snaps})
			cfg := compensation.SchedulerConfig{BatchSize: 16, Concurrency: 4}
			leaseCase(t, 40, []*fixture{a, bb}, []*compensation.Scheduler{a.comp.NewScheduler(cfg), bb.comp.NewScheduler(cfg)})
		})
	}
}
