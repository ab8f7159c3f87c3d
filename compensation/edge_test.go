package compensation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/compensation"
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
	proj := newTotals()
	proj.setFail(failCalls(1))
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
	proj := newTotals()
	proj.setFail(failCalls(1))
	f := newFixture(t, memoryBackend().open(t), options{totals: proj})
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
