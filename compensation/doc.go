// Package compensation records the failures of event functions durably,
// retries them on a schedule, and hands the rest to operators.
//
// # Executions
//
// A failure of one event function (a projection, an event handler, a
// saga, the snapshotter) on one event is an execution: an execution_failed
// aggregate, event-sourced with factum's own aggregate package and stored
// in the application's event store, in the application's bounded context
// (Config.Context). Its ID is derived from the function and the event
// (ExecutionID), so a redelivered event that fails again reaches the same
// execution as a further failure, not a new one. Its state (Execution)
// holds the event's place (aggregate, stream version, event ID), the
// function, the last error, the retry spec, the retries used, the
// recoverability and a status:
//
//	FAILED ──prepare (due, retryable)──► PREPARED ──success──► SUCCEEDED
//	   ▲                                    │  │
//	   └───────────────failure──────────────┘  └─ timeout: due again
//
// The aggregate's commands are internal (operators act through the
// Service; the gateway and HTTP refuse them from outside), stored as
// record_execution_failure (create, or a further failure; it reopens a
// SUCCEEDED execution, since a new failure must not be lost),
// prepare_compensation, force_prepare_compensation (operators; ignores the
// limit), apply_execution_success, apply_execution_failed (fenced by
// attempt, so a retry that outlived its timeout cannot overwrite its
// successor), apply_execution_retry_spec, mark_execution_recoverable and
// change_execution_function. Every command carries its sender's time, so
// decisions are deterministic and clocks injectable.
//
// A retry spec (default 10 retries, 180 s minimum backoff doubling after
// each retry, 120 s execution timeout) is fixed when an execution is
// created, from Config.RetrySpec or a per-function override in
// Config.RetrySpecs. The first retry is due MinBackoff after the first
// failure, and the k-th retry MinBackoff × 2^(k-1) after the previous one
// was prepared. A failure's
// recoverability comes from Config.Classify (default RecoverabilityOf:
// an error marked WithRecoverability, else RECOVERABLE for retryable
// codes, else UNKNOWN); UNRECOVERABLE executions wait for an operator.
//
// # Recording
//
// Compensation implements event.FailureRecorder: a consumer whose function
// failed after its in-place attempts hands the failure to RecordFailure,
// which sends record_execution_failure and returns nil only once it is
// appended (PROCESSED). Until then the consumer does not move past the
// stream, so a crash in between delivers the stream again instead of
// losing the failure. The recorder needs the runtime's gateway, which
// exists only after engine.New: call Bind before the runtime starts, or
// let the engine do it, with the scheduler, by passing NewComponent's
// Component in engine.Config's Components.
//
// # Scheduling
//
// A Scheduler finds due executions with a snapshot query (retryable, and
// FAILED with the next retry due or PREPARED past its timeout), prepares
// each with the version it saw as the command's expected version — of
// several schedulers over one event store exactly one wins, by the
// store's atomic append, and holds the execution until its timeout —
// then loads the stream holding the event, re-delivers it to the one
// function through the middleware chain of the function's consumer
// (engine.Engine.Redeliver: the engine's EventMiddleware sees the retry
// as it sees a live delivery; event.Invoke for a runtime without one) and
// records success or failure.
//
// Compensation is also an event.FailureFinder: a repeated request waiting
// for a branch stage on its first attempt's stream learns from the
// executions that a function failed there (and has not succeeded since),
// even after a restart. A saga's refused command is recorded like any
// other failure, with the refusal's code.
//
// # Operators and metrics
//
// Service is the operator surface for the HTTP API and the CLI: List and
// Paged by Filter (status, recoverability, function, aggregate, event,
// needs-operator), Get with the execution's history, ForceRetry,
// ApplyRetrySpec, MarkRecoverable and ChangeFunction; WithOperator names
// the operator for audit. Service.Counts (executions by status) and
// Scheduler.Stats (retries by outcome) are the metrics hooks.
//
// The executions' snapshots must be kept in the runtime's snapshot store
// with the All strategy (the default), which Config.Snapshots names: the
// scheduler and the lists query them there.
package compensation
