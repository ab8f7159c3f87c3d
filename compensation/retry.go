package compensation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
)

// Outcome is how one retry ended.
type Outcome string

// The outcomes.
const (
	// OutcomeSucceeded: the function handled the event.
	OutcomeSucceeded Outcome = "SUCCEEDED"
	// OutcomeFailed: the function failed again; the failure is recorded.
	OutcomeFailed Outcome = "FAILED"
	// OutcomeSkipped: the execution was not prepared, because another
	// scheduler took it first or it is no longer due.
	OutcomeSkipped Outcome = "SKIPPED"
)

// Attempt reports one retry of one execution.
type Attempt struct {
	// ID is the execution.
	ID factum.AggregateID `json:"id"`
	// Attempt is the retry number (the execution's Retries once prepared);
	// 0 when skipped.
	Attempt int `json:"attempt"`
	// Outcome is how the retry ended.
	Outcome Outcome `json:"outcome"`
	// Error is the function's failure (OutcomeFailed) or why the retry was
	// skipped (OutcomeSkipped).
	Error *factum.Error `json:"error,omitempty"`
	// Duration is how long the function ran (in JSON, nanoseconds).
	Duration time.Duration `json:"durationNs"`
	// Version is the latest version of the execution the retry learned
	// of: the one its outcome was recorded at, or its prepare's, or, when
	// another scheduler won, the one after the version it tried to
	// prepare (the least it can now be); 0 when it learned nothing.
	Version int `json:"version,omitempty"`
}

// applyTimeout bounds recording a retry's outcome, which happens even when
// the caller's context has ended: a result that is known must not be left
// to the lease timeout.
const applyTimeout = 30 * time.Second

// retryOnce prepares it (forced or not) with its version as the expected
// version, re-delivers its event to its function, and records the
// outcome. It returns the prepare's refusal as an error: a lost race is
// CommandExpectVersionConflict, an execution no longer due IllegalState.
func (c *Compensation) retryOnce(ctx context.Context, b *bound, it Item, force bool) (Attempt, error) {
	leased := time.Now()
	at := TimeOf(c.now())
	var body any = prepareCompensation{At: at}
	if force {
		body = forcePrepareCompensation{At: at}
	}
	// A fresh request ID per prepare: a derived one would make a second
	// scheduler's prepare look like a duplicate of the first's and be
	// answered with its success — two holders of one lease.
	cmd := factum.NewCommand(it.ID, body).WithExpectedVersion(it.Version).WithOwner(OperatorFrom(ctx))
	res, err := b.gateway.SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed))
	if err != nil {
		a := Attempt{ID: it.ID, Outcome: OutcomeSkipped, Error: factum.AsError(err)}
		if errors.Is(err, factum.ErrCommandExpectVersionConflict) {
			a.Version = it.Version + 1
		}
		return a, err
	}
	if res.Duplicate || res.AggregateVersion != it.Version+1 {
		err := factum.NewError(factum.CodeCommandExpectVersionConflict,
			fmt.Sprintf("prepare of version %d answered with version %d", it.Version, res.AggregateVersion))
		return Attempt{ID: it.ID, Outcome: OutcomeSkipped, Error: err, Version: max(res.AggregateVersion, it.Version+1)}, err
	}
	exec := it.Execution
	attempt := Attempt{ID: it.ID, Attempt: exec.Retries + 1, Version: res.AggregateVersion}
	start := time.Now()
	// The function must end before the lease does, or another scheduler
	// could take the execution over while it still runs: its time is
	// what is left of the execution timeout since the prepare was sent.
	runErr := c.redeliver(ctx, b, it.ID.TenantOrDefault(), &exec, exec.RetrySpec.ExecutionTimeout-time.Since(leased))
	attempt.Duration = time.Since(start)

	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), applyTimeout)
	defer cancel()
	at = TimeOf(c.now())
	if runErr == nil {
		attempt.Outcome = OutcomeSucceeded
		body = applyExecutionSuccess{Attempt: attempt.Attempt, At: at}
	} else {
		attempt.Outcome, attempt.Error = OutcomeFailed, factum.AsError(runErr)
		body = applyExecutionFailed{Attempt: attempt.Attempt, Error: ErrorInfoOf(cause(runErr)), Recoverability: c.classify(runErr), At: at}
	}
	cmd = factum.NewCommand(it.ID, body).WithOwner(OperatorFrom(ctx))
	// Internal: the outcome of a retry that ran must be recorded even if
	// the runtime began to shut down meanwhile.
	res, err = b.gateway.SendAndWait(command.Internal(actx), cmd, command.Wait(factum.StageProcessed))
	if err != nil {
		if runErr == nil && errors.Is(err, factum.ErrIllegalState) {
			// Already SUCCEEDED: an earlier attempt's late success got
			// there first. The event is handled either way.
			return attempt, nil
		}
		return attempt, fmt.Errorf("compensation: record outcome %s of retry %d of %s: %w", attempt.Outcome, attempt.Attempt, it.ID, err)
	}
	attempt.Version = res.AggregateVersion
	return attempt, nil
}

// redeliver hands the stream holding the execution's event to the
// execution's function, once, under timeout, if the stream is of the
// execution's tenant, through the runtime's consumer of the function
// (its middleware chain) when the runtime has one. It hands over
// the whole stream, as the consumer did: whole-stream functions (the
// snapshotter, sagas) need it, and the events before the failed one are
// delivered again, which at-least-once delivery already asks every
// function to tolerate.
func (c *Compensation) redeliver(ctx context.Context, b *bound, tenant string, exec *Execution, timeout time.Duration) error {
	if timeout <= 0 {
		return factum.NewError(factum.CodeRequestTimeout, "the execution timeout passed before the function could run")
	}
	h, ok := b.functions.Function(exec.Function)
	red := b.redeliverer(exec.Function)
	if !ok && red == nil {
		return factum.NotFound(fmt.Sprintf("event function %s is not registered in this runtime (change the execution's function?)", exec.Function))
	}
	streams, err := b.store.Load(ctx, exec.Aggregate, exec.Version, exec.Version)
	if err != nil {
		return fmt.Errorf("load stream %s version %d: %w", exec.Aggregate, exec.Version, err)
	}
	if len(streams) != 1 || streams[0].AggregateID.TenantOrDefault() != tenant {
		// A stream of another tenant than the execution's is never handed
		// over (recording refuses such executions; this holds for any
		// recorded before that rule).
		return factum.NotFound(fmt.Sprintf("stream %s version %d is not in the event store", exec.Aggregate, exec.Version))
	}
	if !ok {
		_, err := red.Redeliver(ctx, exec.Function, &streams[0], timeout)
		return err
	}
	if b.live != nil {
		// Through the function's consumer, so that the runtime's event
		// middleware (tracing, metrics) sees the retry as it sees a
		// delivery.
		if ran, err := b.live.Redeliver(ctx, exec.Function, &streams[0], timeout); ran {
			return err
		}
	}
	return event.Invoke(ctx, h, &streams[0], timeout)
}

// Redeliverer re-runs the stream of a recorded failure through a function
// that is not one of the runtime's event processors: a component of the
// engine that runs functions of its own (projection.Component, whose
// retry writes the read model in a transaction) implements it, and
// retries find it among the engine's components.
type Redeliverer interface {
	// Redeliver hands the stream to fn once, within timeout, and reports
	// whether fn is the component's (false: it did nothing).
	Redeliver(ctx context.Context, fn factum.Function, s *factum.EventStream, timeout time.Duration) (bool, error)
}

// redeliverer returns the runtime's component that owns fn, or nil.
func (b *bound) redeliverer(fn factum.Function) Redeliverer {
	if b.components == nil {
		return nil
	}
	for _, c := range b.components() {
		if o, ok := c.(interface{ Owns(factum.Function) bool }); ok && o.Owns(fn) {
			if r, ok := c.(Redeliverer); ok {
				return r
			}
		}
	}
	return nil
}

type operatorKey struct{}

// WithOperator returns ctx naming the operator on whose behalf the
// compensation commands sent under it run: their streams carry it as the
// owner, and snapshots show it as the operator, for audit.
func WithOperator(ctx context.Context, operator string) context.Context {
	return context.WithValue(ctx, operatorKey{}, operator)
}

// OperatorFrom returns the operator WithOperator put in ctx, or "".
func OperatorFrom(ctx context.Context) string {
	s, _ := ctx.Value(operatorKey{}).(string)
	return s
}
