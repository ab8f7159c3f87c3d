package compensation

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// newDefinition defines the execution_failed aggregate type in a bounded
// context. Handlers decide on the state and the command's own time only,
// so they are deterministic; the store's atomic append (and, for
// prepares, the expected version) settles races between senders.
func newDefinition(context, name string) *aggregate.Definition[Execution] {
	return aggregate.New[Execution](context, name,
		// Executions are changed by the recorder, the scheduler and the
		// operator service only: no public command route reaches them.
		aggregate.Internal[Execution](),
		aggregate.Source(sourceCreated),
		aggregate.Source(sourceRecorded),
		aggregate.Source(sourcePrepared),
		aggregate.Source(sourceSucceeded),
		aggregate.Source(sourceFailed),
		aggregate.Source(sourceRetrySpec),
		aggregate.Source(sourceRecoverable),
		aggregate.Source(sourceFunction),
		aggregate.Handle(decideRecord, aggregate.AllowCreate()),
		aggregate.Handle(decidePrepare),
		aggregate.Handle(decideForcePrepare),
		aggregate.Handle(decideSuccess),
		aggregate.Handle(decideFailed),
		aggregate.Handle(decideRetrySpec),
		aggregate.Handle(decideRecoverable),
		aggregate.Handle(decideFunction),
	)
}

func sourceCreated(e *Execution, ev executionFailedCreated) {
	*e = Execution{
		FailedEvent: ev.FailedEvent, Status: StatusFailed, Recoverability: ev.Recoverability,
		Error: ev.Error, RetrySpec: ev.RetrySpec, Failures: 1,
		CreatedAt: ev.At, FailedAt: ev.At, NextRetryAt: TimeOf(ev.At.Add(ev.RetrySpec.Backoff(0))),
	}
	e.refresh()
}

func sourceRecorded(e *Execution, ev executionFailureRecorded) {
	e.Error, e.FailedAt = ev.Error, ev.At
	e.Failures++
	if ev.Recoverability != RecoverabilityUnknown && ev.Recoverability != "" {
		e.Recoverability = ev.Recoverability
	}
	if ev.Reopened {
		e.Status, e.Retries, e.NextRetryAt, e.SucceededAt = StatusFailed, 0, ev.NextRetryAt, Time{}
		e.Recoverability = ev.Recoverability
	}
	e.refresh()
}

func sourcePrepared(e *Execution, ev compensationPrepared) {
	e.Status, e.Retries = StatusPrepared, ev.Retries
	e.RetryAt, e.TimeoutAt, e.NextRetryAt = ev.RetryAt, ev.TimeoutAt, ev.NextRetryAt
	e.refresh()
}

func sourceSucceeded(e *Execution, ev executionSuccessApplied) {
	e.Status, e.SucceededAt = StatusSucceeded, ev.At
	e.refresh()
}

func sourceFailed(e *Execution, ev executionFailedApplied) {
	e.Status, e.Error, e.FailedAt = StatusFailed, ev.Error, ev.At
	e.Failures++
	if ev.Recoverability != RecoverabilityUnknown && ev.Recoverability != "" {
		e.Recoverability = ev.Recoverability
	}
	e.refresh()
}

func sourceRetrySpec(e *Execution, ev executionRetrySpecApplied) {
	e.RetrySpec = ev.RetrySpec
	e.refresh()
}

func sourceRecoverable(e *Execution, ev executionRecoverableMarked) {
	e.Recoverability = ev.Recoverability
	e.refresh()
}

func sourceFunction(e *Execution, ev executionFunctionChanged) {
	e.Function = ev.Function
	e.refresh()
}

// exists reports whether the state is of a created execution; the handler
// of an AllowCreate command sees the zero state otherwise.
func exists(e Execution) bool { return e.Status != "" }

func refuseSucceeded(e Execution, what string) error {
	if e.Status == StatusSucceeded {
		return factum.IllegalState(fmt.Sprintf("execution succeeded at %s: cannot %s", e.SucceededAt.Format(timeLayout), what))
	}
	return nil
}

func checkAt(at Time) error {
	if at.IsZero() {
		return factum.IllegalArgument("command time (at) is missing")
	}
	return nil
}

// checkOpenAt checks what a retry's commands need: their time, and an
// execution that has not succeeded (what names the refused step).
func checkOpenAt(e Execution, at Time, what string) error {
	if err := checkAt(at); err != nil {
		return err
	}
	return refuseSucceeded(e, what)
}

func (c recordExecutionFailure) validate() error {
	if err := factum.ValidateID("event id", c.EventID); err != nil {
		return err
	}
	if err := c.Aggregate.Validate(); err != nil {
		return err
	}
	if c.Version < 1 {
		return factum.IllegalArgument(fmt.Sprintf("stream version %d: versions start at 1", c.Version))
	}
	if err := c.Function.Validate(); err != nil {
		return err
	}
	if !c.Error.Code.Valid() || c.Error.Code == factum.CodeOk {
		return factum.IllegalArgument(fmt.Sprintf("error code %q is not a failure code", c.Error.Code))
	}
	if err := c.RetrySpec.Validate(); err != nil {
		return err
	}
	if !c.Recoverability.Valid() {
		return factum.IllegalArgument(fmt.Sprintf("recoverability %q is not valid", c.Recoverability))
	}
	return checkAt(c.At)
}

func decideRecord(ctx context.Context, e Execution, c recordExecutionFailure) ([]any, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	// An execution lives in the tenant of the stream it names: a record
	// naming another tenant's stream would let a retry re-deliver that
	// tenant's event on this one's behalf.
	if cmd := aggregate.CommandFrom(ctx); cmd == nil || cmd.AggregateID.TenantOrDefault() != c.Aggregate.TenantOrDefault() {
		return nil, factum.IllegalArgument("an execution must be recorded in the tenant of the stream it names")
	}
	if !exists(e) {
		return []any{executionFailedCreated(c)}, nil
	}
	ev := executionFailureRecorded{Error: c.Error, Recoverability: c.Recoverability, At: c.At}
	if e.Status == StatusSucceeded {
		ev.Reopened = true
		ev.NextRetryAt = TimeOf(c.At.Add(e.RetrySpec.Backoff(0)))
	}
	return []any{ev}, nil
}

// prepared returns the event of a retry taken at at.
func prepared(e Execution, at Time, forced bool) compensationPrepared {
	retries := e.Retries + 1
	return compensationPrepared{
		Retries: retries, Forced: forced, RetryAt: at,
		TimeoutAt:   TimeOf(at.Add(e.RetrySpec.ExecutionTimeout)),
		NextRetryAt: TimeOf(at.Add(e.RetrySpec.Backoff(retries))),
	}
}

func inFlight(e Execution, at Time) error {
	if e.Status == StatusPrepared && at.Before(e.TimeoutAt.Time) {
		return factum.IllegalState(fmt.Sprintf("retry %d holds the execution until %s", e.Retries, e.TimeoutAt.Format(timeLayout)))
	}
	return nil
}

func decidePrepare(_ context.Context, e Execution, c prepareCompensation) ([]any, error) {
	if err := checkOpenAt(e, c.At, "prepare a retry"); err != nil {
		return nil, err
	}
	switch {
	case e.Recoverability == Unrecoverable:
		return nil, factum.IllegalState("execution is unrecoverable: only an operator can retry it")
	case e.Retries >= e.RetrySpec.MaxRetries:
		return nil, factum.IllegalState(fmt.Sprintf("execution has used its %d retries: only an operator can retry it", e.RetrySpec.MaxRetries))
	case e.Status == StatusFailed && c.At.Before(e.NextRetryAt.Time):
		return nil, factum.IllegalState(fmt.Sprintf("execution is not due before %s", e.NextRetryAt.Format(timeLayout)))
	}
	if err := inFlight(e, c.At); err != nil {
		return nil, err
	}
	return []any{prepared(e, c.At, false)}, nil
}

func decideForcePrepare(_ context.Context, e Execution, c forcePrepareCompensation) ([]any, error) {
	if err := checkOpenAt(e, c.At, "force a retry"); err != nil {
		return nil, err
	}
	if err := inFlight(e, c.At); err != nil {
		return nil, err
	}
	return []any{prepared(e, c.At, true)}, nil
}

func decideSuccess(_ context.Context, e Execution, c applyExecutionSuccess) ([]any, error) {
	if err := checkOpenAt(e, c.At, "apply another success"); err != nil {
		return nil, err
	}
	if c.Attempt < 1 || c.Attempt > e.Retries {
		return nil, factum.IllegalArgument(fmt.Sprintf("attempt %d was never prepared (retries: %d)", c.Attempt, e.Retries))
	}
	return []any{executionSuccessApplied(c)}, nil
}

func decideFailed(_ context.Context, e Execution, c applyExecutionFailed) ([]any, error) {
	if err := checkAt(c.At); err != nil {
		return nil, err
	}
	if !c.Recoverability.Valid() {
		return nil, factum.IllegalArgument(fmt.Sprintf("recoverability %q is not valid", c.Recoverability))
	}
	if e.Status != StatusPrepared || c.Attempt != e.Retries {
		return nil, factum.IllegalState(fmt.Sprintf("attempt %d is not the current retry (status %s, retries %d): its failure is stale", c.Attempt, e.Status, e.Retries))
	}
	return []any{executionFailedApplied(c)}, nil
}

func decideRetrySpec(_ context.Context, e Execution, c applyExecutionRetrySpec) ([]any, error) {
	return decideChange(e, c.RetrySpec.Validate(), "change the retry spec", executionRetrySpecApplied(c))
}

func decideRecoverable(_ context.Context, e Execution, c markExecutionRecoverable) ([]any, error) {
	_, invalid := ParseRecoverability(string(c.Recoverability))
	return decideChange(e, invalid, "change the recoverability", executionRecoverableMarked(c))
}

func decideFunction(_ context.Context, e Execution, c changeExecutionFunction) ([]any, error) {
	return decideChange(e, c.Function.Validate(), "change the function", executionFunctionChanged(c))
}

// decideChange decides an operator's change of an execution's settings
// (what names it): refused when the command is invalid (invalid, its
// validation's error) or the execution has succeeded, otherwise the event
// ev.
func decideChange(e Execution, invalid error, what string, ev any) ([]any, error) {
	if invalid != nil {
		return nil, invalid
	}
	if err := refuseSucceeded(e, what); err != nil {
		return nil, err
	}
	return []any{ev}, nil
}

// timeLayout formats times in refusal messages.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"
