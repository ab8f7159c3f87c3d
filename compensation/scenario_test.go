package compensation_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/event"
)

var errBoom = errors.New("projection store unavailable")

// failingTotals returns a totals projection that fails the first n calls
// for every order.
func failingTotals(n int) *totals {
	p := newTotals()
	p.setFail(failCalls(n))
	return p
}

// failCalls fails the first n calls for every order.
func failCalls(n int) func(string, int) error {
	return func(_ string, call int) error {
		if call <= n {
			return errBoom
		}
		return nil
	}
}

func TestProjectionFailsTwiceThenSucceeds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		proj := newTotals()
		proj.setFail(func(order string, call int) error {
			if order == "o-1" && call <= 2 {
				return errBoom
			}
			return nil
		})
		f := newFixture(t, b.open(t), options{totals: proj})
		start := f.clock.Now()
		ev := f.place("o-1", 3)
		f.place("o-2", 4) // never fails

		// The consumer's delivery fails: failure 1 is recorded.
		d := f.execution(ev, nil)
		e := d.Execution
		if e.Status != compensation.StatusFailed || e.Retries != 0 || e.Failures != 1 || !e.Retryable ||
			e.Function != totalsFn || e.Aggregate.ID != "o-1" || e.Version != 1 || e.EventName != "order_placed" ||
			e.Error.Code != factum.CodeInternalServerError || e.Error.Message == "" ||
			e.DueAt.Time != start.Add(compensation.DefaultMinBackoff) || e.RetrySpec != compensation.DefaultRetrySpec() {
			t.Fatalf("recorded execution: %+v", e)
		}
		if d.ID.Tenant != factum.DefaultTenant || d.ID.Context != "shop" || d.ID.Aggregate != compensation.AggregateName {
			t.Fatalf("execution identity %v", d.ID)
		}
		eventually(t, "o-2 projected", func() (bool, string) {
			qty, applied, _ := proj.get("o-2")
			return qty == 4 && applied == 1, fmt.Sprintf("qty %d applied %d times", qty, applied)
		})

		// Not due before the minimum backoff.
		f.clock.Advance(compensation.DefaultMinBackoff - time.Second)
		f.runOnce(f.sched, 0, 0, 0)
		f.clock.Advance(time.Second)
		f.runOnce(f.sched, 1, 0, 1) // failure 2, from the retry
		d = f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Retries == 1 })
		if e := d.Execution; e.Status != compensation.StatusFailed || e.Failures != 2 ||
			e.DueAt.Time != f.clock.Now().Add(2*compensation.DefaultMinBackoff) {
			t.Fatalf("after the failed retry: %+v", e)
		}
		// The backoff doubled.
		f.clock.Advance(2*compensation.DefaultMinBackoff - time.Second)
		f.runOnce(f.sched, 0, 0, 0)
		f.clock.Advance(time.Second)
		f.runOnce(f.sched, 1, 1, 0)
		d = f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Status == compensation.StatusSucceeded })
		if e := d.Execution; e.Failures != 2 || e.Retries != 2 || e.Retryable || !e.SucceededAt.Equal(f.clock.Now()) {
			t.Fatalf("succeeded execution: %+v", e)
		}
		want := []string{"execution_failed_created", "compensation_prepared", "execution_failed_applied", "compensation_prepared", "execution_success_applied"}
		if got := eventNames(d.History); !slices.Equal(got, want) {
			t.Fatalf("history %v, want %v", got, want)
		}
		// The read model is right and the event applied once.
		if qty, applied, calls := proj.get("o-1"); qty != 3 || applied != 1 || calls != 3 {
			t.Fatalf("o-1 is %d, applied %d times in %d calls", qty, applied, calls)
		}
		f.clock.Advance(24 * time.Hour)
		f.runOnce(f.sched, 0, 0, 0)
		counts, err := f.svc.Counts(context.Background())
		if err != nil || counts != (compensation.Counts{Succeeded: 1}) {
			t.Fatalf("counts %+v, %v", counts, err)
		}
		if st := f.sched.Stats(); st != (compensation.Stats{Prepared: 2, Succeeded: 1, Failed: 1}) {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestUnrecoverableWaitsForAnOperator(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		proj := newTotals()
		proj.setFail(func(_ string, call int) error {
			if call == 1 {
				return compensation.WithRecoverability(factum.IllegalArgument("sku apple is unknown to the catalogue"), compensation.Unrecoverable)
			}
			return nil
		})
		f := newFixture(t, b.open(t), options{totals: proj})
		ev := f.place("o-1", 2)
		d := f.execution(ev, nil)
		if e := d.Execution; e.Recoverability != compensation.Unrecoverable || e.Retryable || e.Error.Code != factum.CodeIllegalArgument {
			t.Fatalf("recorded: %+v", e)
		}
		ctx := context.Background()
		f.clock.Advance(30 * 24 * time.Hour)
		f.runOnce(f.sched, 0, 0, 0)
		waiting, err := f.svc.List(ctx, compensation.Filter{NeedsOperator: true}, 0)
		if err != nil || len(waiting) != 1 || waiting[0].ID != d.ID {
			t.Fatalf("needs operator: %+v, %v", waiting, err)
		}
		if c, err := f.svc.Counts(ctx); err != nil || c != (compensation.Counts{Failed: 1, Blocked: 1}) {
			t.Fatalf("counts %+v, %v", c, err)
		}

		op := compensation.WithOperator(ctx, "alice")
		if err := f.svc.MarkRecoverable(op, d.ID.ID, "PERHAPS"); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Fatalf("bad recoverability: %v", err)
		}
		if err := f.svc.MarkRecoverable(op, d.ID.ID, compensation.Recoverable); err != nil {
			t.Fatal(err)
		}
		d = f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Retryable })
		if last := d.History[len(d.History)-1]; last.OwnerID != "alice" || last.Events[0].Name != "execution_recoverable_marked" {
			t.Fatalf("the operator's stream: %+v", last)
		}
		f.runOnce(f.sched, 1, 1, 0)
		f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Status == compensation.StatusSucceeded })
		if qty, applied, _ := proj.get("o-1"); qty != 2 || applied != 1 {
			t.Fatalf("o-1 is %d, applied %d times", qty, applied)
		}
	})
}

func TestRetryLimitAndForcePrepare(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		proj := failingTotals(1 << 30)
		limited := compensation.RetrySpec{MaxRetries: 2, MinBackoff: time.Minute, ExecutionTimeout: 10 * time.Second}
		f := newFixture(t, b.open(t), options{totals: proj, config: compensation.Config{
			RetrySpecs: map[factum.Function]compensation.RetrySpec{{Context: "shop", Processor: "order_totals"}: limited},
		}})
		ev := f.place("o-1", 5)
		d := f.execution(ev, nil)
		if d.Execution.RetrySpec != limited {
			t.Fatalf("retry spec %+v, want the processor's override %+v", d.Execution.RetrySpec, limited)
		}
		f.clock.Advance(time.Minute)
		f.runOnce(f.sched, 1, 0, 1)
		f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Retries == 1 })
		f.clock.Advance(2 * time.Minute)
		f.runOnce(f.sched, 1, 0, 1)
		d = f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Retries == 2 })
		if d.Execution.Retryable || d.Execution.Status != compensation.StatusFailed {
			t.Fatalf("after the last retry: %+v", d.Execution)
		}
		// The limit holds however long we wait.
		f.clock.Advance(365 * 24 * time.Hour)
		f.runOnce(f.sched, 0, 0, 0)

		ctx := context.Background()
		a, err := f.svc.ForceRetry(ctx, d.ID.ID)
		if err != nil || a.Outcome != compensation.OutcomeFailed || a.Attempt != 3 || !errors.Is(a.Error, factum.ErrInternalServerError) {
			t.Fatalf("forced retry while still failing: %+v, %v", a, err)
		}
		proj.setFail(nil)
		a, err = f.svc.ForceRetry(ctx, d.ID.ID)
		if err != nil || a.Outcome != compensation.OutcomeSucceeded || a.Attempt != 4 {
			t.Fatalf("forced retry: %+v, %v", a, err)
		}
		d = f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Status == compensation.StatusSucceeded })
		if d.Execution.Retries != 4 || d.Execution.Failures != 4 {
			t.Fatalf("after the forced retries: %+v", d.Execution)
		}
		if _, err := f.svc.ForceRetry(ctx, d.ID.ID); factum.CodeOf(err) != factum.CodeIllegalState {
			t.Fatalf("force retry of a succeeded execution: %v", err)
		}
		if qty, applied, _ := proj.get("o-1"); qty != 5 || applied != 1 {
			t.Fatalf("o-1 is %d, applied %d times", qty, applied)
		}
	})
}

func TestTimedOutPreparedIsRetried(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		proj := failingTotals(1)
		f := newFixture(t, b.open(t), options{totals: proj})
		ev := f.place("o-1", 1)
		d := f.execution(ev, nil)

		// A scheduler prepares the retry and dies before running it.
		f.clock.Advance(compensation.DefaultMinBackoff)
		ctx := context.Background()
		prep := factum.NewCommand(d.ID, compensation.PrepareCompensation{At: compensation.TimeOf(f.clock.Now())}).WithExpectedVersion(d.Version)
		if _, err := f.rt.Gateway().SendAndWait(ctx, prep, processed()); err != nil {
			t.Fatal(err)
		}
		d = f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Status == compensation.StatusPrepared })

		// It holds the execution until its timeout...
		f.clock.Advance(compensation.DefaultExecutionTimeout - time.Millisecond)
		f.runOnce(f.sched, 0, 0, 0)
		if _, err := f.svc.ForceRetry(ctx, d.ID.ID); factum.CodeOf(err) != factum.CodeIllegalState {
			t.Fatalf("force retry of a held execution: %v", err)
		}
		// ...then another scheduler takes over.
		f.clock.Advance(time.Millisecond)
		other := f.comp.NewScheduler(compensation.SchedulerConfig{})
		f.runOnce(other, 1, 1, 0)
		d = f.execution(ev, func(d compensation.Detail) bool { return d.Execution.Status == compensation.StatusSucceeded })
		if d.Execution.Retries != 2 {
			t.Fatalf("after the take-over: %+v", d.Execution)
		}
		// The dead scheduler's late failure is fenced off.
		late := factum.NewCommand(d.ID, compensation.ApplyExecutionFailed{Attempt: 1, Error: compensation.ErrorInfoOf(errBoom),
			Recoverability: compensation.RecoverabilityUnknown, At: compensation.TimeOf(f.clock.Now())})
		_, err := f.rt.Gateway().SendAndWait(ctx, late, processed())
		mustCode(t, err, factum.CodeIllegalState)
		if qty, applied, _ := proj.get("o-1"); qty != 1 || applied != 1 {
			t.Fatalf("o-1 is %d, applied %d times", qty, applied)
		}
	})
}

func TestCrashBeforeTheRecordRedelivers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		proj := failingTotals(1 << 30)
		// The first three records fail, as if the process died between the
		// function's failure and the record.
		var recordCalls int
		f := newFixture(t, b.open(t), options{totals: proj, wrap: func(r event.FailureRecorder) event.FailureRecorder {
			return event.FailureRecorderFunc(func(ctx context.Context, fl event.Failure) error {
				recordCalls++ // one consumer calls it, one stream at a time
				if recordCalls <= 3 {
					return errors.New("crash")
				}
				return r.RecordFailure(ctx, fl)
			})
		}})
		ev := f.place("o-1", 1)
		d := f.execution(ev, nil)
		if d.Execution.Failures != 1 {
			t.Fatalf("recorded: %+v", d.Execution)
		}
		// The consumer delivered the stream again after each lost record,
		// and moved on only after the record.
		time.Sleep(50 * time.Millisecond)
		if _, _, calls := proj.get("o-1"); calls != 4 {
			t.Fatalf("the function ran %d times, want 4 (one per delivery)", calls)
		}
	})
}

func TestCrashedConsumerRedeliversAfterRestart(t *testing.T) {
	b := sqliteBackend()
	proj := failingTotals(1 << 30)
	checkpoints := event.NewMemoryCheckpoints()
	clk := newClock()
	attempted := make(chan struct{}, 1000)
	first := newFixture(t, b.open(t), options{totals: proj, clock: clk, checkpoints: checkpoints, noCleanupShutdown: true,
		wrap: func(event.FailureRecorder) event.FailureRecorder {
			return event.FailureRecorderFunc(func(context.Context, event.Failure) error {
				attempted <- struct{}{}
				return errors.New("crash: the process dies before the record")
			})
		}})
	ev := first.place("o-1", 7)
	<-attempted
	// Stop the first instance: its consumer never gets past the stream.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := first.rt.Shutdown(ctx); err == nil {
		t.Fatal("shutdown drained a consumer whose failure could not be recorded")
	}
	pos, err := checkpoints.Checkpoint(context.Background(), factum.Function{Context: "shop", Processor: totalsFn.Processor})
	if err != nil || !pos.IsZero() {
		t.Fatalf("checkpoint %v moved past the unrecorded failure (%v)", pos, err)
	}
	if _, err := first.svc.Get(context.Background(), compensation.ExecutionID(totalsFn, ev)); factum.CodeOf(err) != factum.CodeNotFound {
		t.Fatalf("an execution exists before any record succeeded: %v", err)
	}

	// A new instance over the same database and checkpoints delivers the
	// stream again, and this time the failure is recorded.
	second := newFixture(t, b.reopen(t), options{totals: proj, clock: clk, checkpoints: checkpoints, snaps: first.snaps})
	d := second.execution(ev, nil)
	if d.Execution.Failures != 1 || d.Execution.Aggregate.ID != "o-1" {
		t.Fatalf("recorded after restart: %+v", d.Execution)
	}
	proj.setFail(nil)
	clk.Advance(compensation.DefaultMinBackoff)
	second.runOnce(second.sched, 1, 1, 0)
	if qty, applied, _ := proj.get("o-1"); qty != 7 || applied != 1 {
		t.Fatalf("o-1 is %d, applied %d times", qty, applied)
	}
}
