package compensation

import (
	"github.com/factum-go/factum"
)

// AggregateName is the default name of the execution aggregate type.
const AggregateName = "execution_failed"

// Execution is the state of one execution_failed aggregate: one event
// function's failure on one event, and what compensation has done about
// it. It is what snapshots hold and queries select on; field paths such
// as "state.status" or "state.function.processor" name its JSON members.
type Execution struct {
	// FailedEvent is the event the function failed on, its stream and the
	// function; its fields are members of the execution's JSON.
	FailedEvent
	// Status is where the execution stands.
	Status Status `json:"status"`
	// Recoverability says whether retrying may help.
	Recoverability Recoverability `json:"recoverable"`
	// Retryable reports whether the scheduler may still retry the
	// execution: not SUCCEEDED, not UNRECOVERABLE, and Retries below
	// RetrySpec.MaxRetries. It is derived from the other fields after
	// every event, so that a query can select on it.
	Retryable bool `json:"retryable"`
	// Error is the last failure.
	Error ErrorInfo `json:"error"`
	// RetrySpec governs the automatic retries.
	RetrySpec RetrySpec `json:"retrySpec"`
	// Retries counts the retries prepared so far, forced ones included.
	Retries int `json:"retries"`
	// Failures counts the failures recorded: by consumers, and by retries.
	Failures int `json:"failures"`
	// CreatedAt is when the first failure was recorded.
	CreatedAt Time `json:"createdAt,omitzero"`
	// FailedAt is when the last failure happened.
	FailedAt Time `json:"failedAt,omitzero"`
	// RetryAt is when the last retry was prepared.
	RetryAt Time `json:"retryAt,omitzero"`
	// TimeoutAt is when the last prepared retry times out.
	TimeoutAt Time `json:"timeoutAt,omitzero"`
	// NextRetryAt is when a FAILED execution is next due.
	NextRetryAt Time `json:"nextRetryAt,omitzero"`
	// DueAt is when the scheduler may next prepare the execution:
	// NextRetryAt while FAILED, TimeoutAt while PREPARED, zero once
	// SUCCEEDED. Derived, for queries.
	DueAt Time `json:"dueAt,omitzero"`
	// SucceededAt is when a retry succeeded.
	SucceededAt Time `json:"succeededAt,omitzero"`
}

// FailedEvent names one event function's failure on one event: the event,
// the stream holding it and the function.
type FailedEvent struct {
	// EventID is the event the function failed on.
	EventID string `json:"eventId"`
	// EventName is that event's name.
	EventName string `json:"eventName,omitempty"`
	// Aggregate is the aggregate of the stream holding the event.
	Aggregate factum.AggregateID `json:"aggregate"`
	// Version is the version of that stream: with Aggregate, where the
	// scheduler finds the event again.
	Version int `json:"version"`
	// Function is the event function that failed.
	Function factum.Function `json:"function"`
	// Stage is the wait stage the function signals.
	Stage factum.CommandStage `json:"stage,omitempty"`
}

// refresh recomputes the derived fields after an event.
func (e *Execution) refresh() {
	e.Retryable = e.Status != StatusSucceeded && e.Recoverability != Unrecoverable && e.Retries < e.RetrySpec.MaxRetries
	switch e.Status {
	case StatusFailed:
		e.DueAt = e.NextRetryAt
	case StatusPrepared:
		e.DueAt = e.TimeoutAt
	default:
		e.DueAt = Time{}
	}
}

// ExecutionID returns the ID of the execution of fn on the event: derived,
// so that recording the same failure again (a redelivery) reaches the same
// execution.
func ExecutionID(fn factum.Function, eventID string) string {
	return factum.DeriveID("compensation", fn.Context, fn.Processor, fn.Name, eventID)
}

// The commands. Each carries the time it is decided at (At), taken from
// the sender's clock, so that decisions and state are deterministic and
// tests can inject a clock.

// recordExecutionFailure records a function's failure on an event. It
// creates the execution, or, if it exists, records a further failure of
// it: the error is updated; a SUCCEEDED execution is reopened as FAILED
// with its retries reset, because a failure of the function is a new fact
// that must not be lost.
type recordExecutionFailure struct {
	// FailedEvent is the failed event, its stream and the function, as in
	// Execution.
	FailedEvent
	// Error is the failure.
	Error ErrorInfo `json:"error"`
	// RetrySpec is the spec a new execution gets; a further failure
	// keeps the execution's own.
	RetrySpec RetrySpec `json:"retrySpec"`
	// Recoverability classifies the failure; UNKNOWN leaves a further
	// failure's execution as it was.
	Recoverability Recoverability `json:"recoverable"`
	// At is when the function failed.
	At Time `json:"at"`
}

// prepareCompensation takes a due execution for one retry: it is refused
// unless the execution is retryable and FAILED with its next retry due or
// PREPARED past its timeout. Sent with the version the sender saw as the
// expected version, exactly one of several concurrent senders wins.
type prepareCompensation struct {
	// At is the sender's time: the retry is due, and its timeout counts,
	// from it.
	At Time `json:"at"`
}

// forcePrepareCompensation is an operator's retry: like
// prepareCompensation, but ignoring the retry limit, the recoverability
// and the due time. It is still refused while another retry holds the
// execution (PREPARED before its timeout) and once it SUCCEEDED.
type forcePrepareCompensation struct {
	// At is the operator's time, as in prepareCompensation.
	At Time `json:"at"`
}

// applyExecutionSuccess records that a retry handled the event. A late
// success of an earlier attempt is accepted too: the event was handled.
type applyExecutionSuccess struct {
	// Attempt is the Retries value the retry was prepared as.
	Attempt int `json:"attempt"`
	// At is when the retry succeeded.
	At Time `json:"at"`
}

// applyExecutionFailed records that the current retry failed. It is
// refused for any attempt but the current PREPARED one, so a retry that
// outlived its timeout cannot overwrite its successor's outcome.
type applyExecutionFailed struct {
	// Attempt is the Retries value the retry was prepared as.
	Attempt int `json:"attempt"`
	// Error is the retry's failure.
	Error ErrorInfo `json:"error"`
	// Recoverability classifies it; UNKNOWN keeps the execution's.
	Recoverability Recoverability `json:"recoverable"`
	// At is when the retry failed.
	At Time `json:"at"`
}

// applyExecutionRetrySpec replaces the execution's retry spec.
type applyExecutionRetrySpec struct {
	// RetrySpec is the new spec, taken literally (it must validate).
	RetrySpec RetrySpec `json:"retrySpec"`
}

// markExecutionRecoverable sets the execution's recoverability.
type markExecutionRecoverable struct {
	// Recoverability is the new recoverability.
	Recoverability Recoverability `json:"recoverable"`
}

// changeExecutionFunction points the execution at another function, for
// when the failed function was renamed or replaced.
type changeExecutionFunction struct {
	// Function is the function retries re-deliver the event to.
	Function factum.Function `json:"function"`
}

// The events.

// executionFailedCreated records the first failure.
type executionFailedCreated recordExecutionFailure

// executionFailureRecorded records a further failure reported by a
// consumer; Reopened marks one that reopened a SUCCEEDED execution.
type executionFailureRecorded struct {
	// Error, Recoverability and At are the command's.
	Error          ErrorInfo      `json:"error"`
	Recoverability Recoverability `json:"recoverable"`
	At             Time           `json:"at"`
	// Reopened marks a record that reopened a SUCCEEDED execution, with
	// its retries reset and its next retry due at NextRetryAt.
	Reopened    bool `json:"reopened,omitempty"`
	NextRetryAt Time `json:"nextRetryAt,omitzero"`
}

// compensationPrepared records a retry taken.
type compensationPrepared struct {
	// Retries is the retry's number, the execution's new Retries.
	Retries int `json:"retries"`
	// Forced marks an operator's retry.
	Forced bool `json:"forced,omitempty"`
	// RetryAt, TimeoutAt and NextRetryAt are the execution's new times,
	// computed when the retry was decided, so that sourcing is
	// deterministic.
	RetryAt     Time `json:"retryAt"`
	TimeoutAt   Time `json:"timeoutAt"`
	NextRetryAt Time `json:"nextRetryAt"`
}

// executionSuccessApplied records a successful retry.
type executionSuccessApplied struct {
	// Attempt and At are the command's.
	Attempt int  `json:"attempt"`
	At      Time `json:"at"`
}

// executionFailedApplied records a failed retry.
type executionFailedApplied applyExecutionFailed

// executionRetrySpecApplied records a new retry spec.
type executionRetrySpecApplied applyExecutionRetrySpec

// executionRecoverableMarked records a new recoverability.
type executionRecoverableMarked markExecutionRecoverable

// executionFunctionChanged records a new function.
type executionFunctionChanged changeExecutionFunction

// Message names are fixed here, so that renaming a Go type never renames
// stored commands or events.

// MessageName names the command.
func (recordExecutionFailure) MessageName() string { return "record_execution_failure" }

// MessageName names the command.
func (prepareCompensation) MessageName() string { return "prepare_compensation" }

// MessageName names the command.
func (forcePrepareCompensation) MessageName() string { return "force_prepare_compensation" }

// MessageName names the command.
func (applyExecutionSuccess) MessageName() string { return "apply_execution_success" }

// MessageName names the command.
func (applyExecutionFailed) MessageName() string { return "apply_execution_failed" }

// MessageName names the command.
func (applyExecutionRetrySpec) MessageName() string { return "apply_execution_retry_spec" }

// MessageName names the command.
func (markExecutionRecoverable) MessageName() string { return "mark_execution_recoverable" }

// MessageName names the command.
func (changeExecutionFunction) MessageName() string { return "change_execution_function" }

// MessageName names the event.
func (executionFailedCreated) MessageName() string { return "execution_failed_created" }

// MessageName names the event.
func (executionFailureRecorded) MessageName() string { return "execution_failure_recorded" }

// MessageName names the event.
func (compensationPrepared) MessageName() string { return "compensation_prepared" }

// MessageName names the event.
func (executionSuccessApplied) MessageName() string { return "execution_success_applied" }

// MessageName names the event.
func (executionFailedApplied) MessageName() string { return "execution_failed_applied" }

// MessageName names the event.
func (executionRetrySpecApplied) MessageName() string { return "execution_retry_spec_applied" }

// MessageName names the event.
func (executionRecoverableMarked) MessageName() string { return "execution_recoverable_marked" }

// MessageName names the event.
func (executionFunctionChanged) MessageName() string { return "execution_function_changed" }
