package compensation

import (
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate/aggregatetest"
)

var (
	t0     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	testFn = factum.Function{Context: "shop", Processor: "summaries", Name: "on_order_placed"}
	spec   = RetrySpec{MaxRetries: 2, MinBackoff: time.Minute, ExecutionTimeout: 30 * time.Second}
)

func at(d time.Duration) Time { return TimeOf(t0.Add(d)) }

func recordCmd(d time.Duration, r Recoverability) RecordExecutionFailure {
	return RecordExecutionFailure{
		EventID: "ev-1", EventName: "order_placed", Aggregate: factum.NamedAggregate{Context: "shop", Aggregate: "order"}.WithID("o-1"),
		Version: 3, Function: testFn, Stage: factum.StageProjected,
		Error: ErrorInfo{Code: factum.CodeInternalServerError, Message: "boom"}, RetrySpec: spec, Recoverability: r, At: at(d),
	}
}

func created() Execution {
	c := recordCmd(0, RecoverabilityUnknown)
	return Execution{
		EventID: c.EventID, EventName: c.EventName, Aggregate: c.Aggregate, Version: 3, Function: testFn,
		Stage: factum.StageProjected, Status: StatusFailed, Recoverability: RecoverabilityUnknown, Retryable: true,
		Error: c.Error, RetrySpec: spec, Failures: 1, CreatedAt: at(0), FailedAt: at(0),
		NextRetryAt: at(time.Minute), DueAt: at(time.Minute),
	}
}

func TestExecutionLifecycle(t *testing.T) {
	def := newDefinition("shop", AggregateName)
	aggregatetest.For(t, def).
		When(recordCmd(0, RecoverabilityUnknown)).
		Events(ExecutionFailedCreated(recordCmd(0, RecoverabilityUnknown))).
		State(created()).Version(1).
		Fork("not due before the backoff", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
			s.When(PrepareCompensation{At: at(59 * time.Second)}).Error(factum.CodeIllegalState)
		}).
		Fork("prepare when due, then fail, then succeed", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
			want := created()
			want.Status, want.Retries = StatusPrepared, 1
			want.RetryAt, want.TimeoutAt, want.NextRetryAt = at(time.Minute), at(time.Minute+30*time.Second), at(3*time.Minute)
			want.DueAt = want.TimeoutAt
			s.When(PrepareCompensation{At: at(time.Minute)}).
				Events(CompensationPrepared{Retries: 1, RetryAt: at(time.Minute), TimeoutAt: at(90 * time.Second), NextRetryAt: at(3 * time.Minute)}).
				State(want).Version(2).
				Fork("in flight until its timeout", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
					s.When(PrepareCompensation{At: at(89 * time.Second)}).Error(factum.CodeIllegalState)
					s.When(ForcePrepareCompensation{At: at(89 * time.Second)}).Error(factum.CodeIllegalState)
				}).
				Fork("timed out: due again", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
					s.When(PrepareCompensation{At: at(90 * time.Second)}).
						Events(CompensationPrepared{Retries: 2, RetryAt: at(90 * time.Second), TimeoutAt: at(2 * time.Minute), NextRetryAt: at(90*time.Second + 4*time.Minute)}).
						StateMatches(func(t testing.TB, e Execution) {
							if e.Retryable || e.Retries != 2 {
								t.Errorf("after the last retry: retryable %v retries %d", e.Retryable, e.Retries)
							}
						}).
						Then().
						When(ApplyExecutionFailed{Attempt: 1, Error: ErrorInfo{Code: factum.CodeInternalServerError}, Recoverability: RecoverabilityUnknown, At: at(3 * time.Minute)}).
						Error(factum.CodeIllegalState) // the stale attempt is fenced off
				}).
				Fork("failure", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
					fail := ApplyExecutionFailed{Attempt: 1, Error: ErrorInfo{Code: factum.CodeRequestTimeout, Message: "slow"}, Recoverability: Recoverable, At: at(80 * time.Second)}
					s.When(fail).Events(ExecutionFailedApplied(fail)).
						StateMatches(func(t testing.TB, e Execution) {
							if e.Status != StatusFailed || e.Failures != 2 || e.Error.Message != "slow" || e.Recoverability != Recoverable || e.DueAt != at(3*time.Minute) || !e.Retryable {
								t.Errorf("after a failed retry: %+v", e)
							}
						}).
						Then().
						When(PrepareCompensation{At: at(3 * time.Minute)}).EventTypes(CompensationPrepared{}).
						Then().
						When(PrepareCompensation{At: at(time.Hour)}).Error(factum.CodeIllegalState) // in flight
				}).
				Fork("success is terminal", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
					s.When(ApplyExecutionSuccess{Attempt: 1, At: at(70 * time.Second)}).
						Events(ExecutionSuccessApplied{Attempt: 1, At: at(70 * time.Second)}).
						StateMatches(func(t testing.TB, e Execution) {
							if e.Status != StatusSucceeded || e.Retryable || !e.DueAt.IsZero() {
								t.Errorf("after success: %+v", e)
							}
						}).
						Fork("nothing more to retry or change", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
							s.When(ApplyExecutionSuccess{Attempt: 1, At: at(time.Hour)}).Error(factum.CodeIllegalState)
							s.When(ForcePrepareCompensation{At: at(time.Hour)}).Error(factum.CodeIllegalState)
							s.When(PrepareCompensation{At: at(time.Hour)}).Error(factum.CodeIllegalState)
							s.When(ApplyExecutionRetrySpec{RetrySpec: spec}).Error(factum.CodeIllegalState)
							s.When(MarkExecutionRecoverable{Recoverability: Recoverable}).Error(factum.CodeIllegalState)
							s.When(ChangeExecutionFunction{Function: testFn}).Error(factum.CodeIllegalState)
						}).
						Fork("a new failure reopens it", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
							s.When(recordCmd(time.Hour, RecoverabilityUnknown)).
								Events(ExecutionFailureRecorded{Error: recordCmd(0, "").Error, Recoverability: RecoverabilityUnknown,
									Reopened: true, NextRetryAt: at(time.Hour + time.Minute), At: at(time.Hour)}).
								StateMatches(func(t testing.TB, e Execution) {
									if e.Status != StatusFailed || e.Retries != 0 || !e.Retryable || e.DueAt != at(time.Hour+time.Minute) || e.Failures != 2 {
										t.Errorf("reopened: %+v", e)
									}
								})
						})
				})
		}).
		Fork("a further failure of the same execution", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
			s.When(recordCmd(time.Second, Unrecoverable)).
				EventTypes(ExecutionFailureRecorded{}).
				StateMatches(func(t testing.TB, e Execution) {
					if e.Failures != 2 || e.Status != StatusFailed || e.Recoverability != Unrecoverable || e.Retryable || e.DueAt != at(time.Minute) {
						t.Errorf("after a further failure: %+v", e)
					}
				})
		})
}

func TestExecutionLimitsAndOperators(t *testing.T) {
	def := newDefinition("shop", AggregateName)
	exhausted := aggregatetest.For(t, def).
		Given(ExecutionFailedCreated(recordCmd(0, RecoverabilityUnknown))).
		Given(CompensationPrepared{Retries: 1, RetryAt: at(time.Minute), TimeoutAt: at(90 * time.Second), NextRetryAt: at(3 * time.Minute)}).
		Given(ExecutionFailedApplied{Attempt: 1, Error: ErrorInfo{Code: factum.CodeInternalServerError}, Recoverability: RecoverabilityUnknown, At: at(80 * time.Second)}).
		Given(CompensationPrepared{Retries: 2, RetryAt: at(3 * time.Minute), TimeoutAt: at(210 * time.Second), NextRetryAt: at(7 * time.Minute)}).
		Given(ExecutionFailedApplied{Attempt: 2, Error: ErrorInfo{Code: factum.CodeInternalServerError}, Recoverability: RecoverabilityUnknown, At: at(200 * time.Second)})

	exhausted.When(PrepareCompensation{At: at(time.Hour)}).Error(factum.CodeIllegalState)
	exhausted.When(ForcePrepareCompensation{At: at(time.Hour)}).
		Events(CompensationPrepared{Retries: 3, Forced: true, RetryAt: at(time.Hour), TimeoutAt: at(time.Hour + 30*time.Second), NextRetryAt: at(time.Hour + 8*time.Minute)})
	exhausted.When(ApplyExecutionRetrySpec{RetrySpec: RetrySpec{MaxRetries: 5, MinBackoff: time.Second, ExecutionTimeout: time.Second}}).
		StateMatches(func(t testing.TB, e Execution) {
			if !e.Retryable || e.RetrySpec.MaxRetries != 5 {
				t.Errorf("a higher limit makes it retryable again: %+v", e)
			}
		}).
		Then().When(PrepareCompensation{At: at(time.Hour)}).EventTypes(CompensationPrepared{})

	unrecoverable := aggregatetest.For(t, def).Given(ExecutionFailedCreated(recordCmd(0, Unrecoverable)))
	unrecoverable.When(PrepareCompensation{At: at(time.Hour)}).Error(factum.CodeIllegalState)
	unrecoverable.When(MarkExecutionRecoverable{Recoverability: Recoverable}).
		Events(ExecutionRecoverableMarked{Recoverability: Recoverable}).
		Then().When(PrepareCompensation{At: at(time.Hour)}).EventTypes(CompensationPrepared{})
	unrecoverable.When(ForcePrepareCompensation{At: at(time.Second)}).EventTypes(CompensationPrepared{})

	other := factum.Function{Context: "shop", Processor: "summaries_v2", Name: "on_order_placed"}
	unrecoverable.When(ChangeExecutionFunction{Function: other}).
		StateMatches(func(t testing.TB, e Execution) {
			if e.Function != other {
				t.Errorf("function = %v", e.Function)
			}
		})
}

func TestExecutionRefusesBadInput(t *testing.T) {
	def := newDefinition("shop", AggregateName)
	bad := func(mut func(*RecordExecutionFailure)) RecordExecutionFailure {
		c := recordCmd(0, RecoverabilityUnknown)
		mut(&c)
		return c
	}
	for name, cmd := range map[string]RecordExecutionFailure{
		"no event":          bad(func(c *RecordExecutionFailure) { c.EventID = "" }),
		"bad aggregate":     bad(func(c *RecordExecutionFailure) { c.Aggregate.ID = "" }),
		"version 0":         bad(func(c *RecordExecutionFailure) { c.Version = 0 }),
		"bad function":      bad(func(c *RecordExecutionFailure) { c.Function.Name = "" }),
		"ok code":           bad(func(c *RecordExecutionFailure) { c.Error.Code = factum.CodeOk }),
		"unknown code":      bad(func(c *RecordExecutionFailure) { c.Error.Code = "Nope" }),
		"negative retries":  bad(func(c *RecordExecutionFailure) { c.RetrySpec.MaxRetries = -1 }),
		"zero backoff":      bad(func(c *RecordExecutionFailure) { c.RetrySpec.MinBackoff = 0 }),
		"bad recoverable":   bad(func(c *RecordExecutionFailure) { c.Recoverability = "MAYBE" }),
		"no time":           bad(func(c *RecordExecutionFailure) { c.At = Time{} }),
		"zero exec timeout": bad(func(c *RecordExecutionFailure) { c.RetrySpec.ExecutionTimeout = 0 }),
	} {
		t.Run(name, func(t *testing.T) {
			aggregatetest.For(t, def).When(cmd).Error(factum.CodeIllegalArgument).Version(0)
		})
	}
	s := aggregatetest.For(t, def).Given(ExecutionFailedCreated(recordCmd(0, RecoverabilityUnknown)))
	s.When(PrepareCompensation{}).Error(factum.CodeIllegalArgument)
	s.When(MarkExecutionRecoverable{Recoverability: "yes"}).Error(factum.CodeIllegalArgument)
	s.When(ApplyExecutionRetrySpec{}).Error(factum.CodeIllegalArgument)
	s.When(ChangeExecutionFunction{Function: factum.Function{Context: "shop"}}).Error(factum.CodeIllegalArgument)
	s.When(ApplyExecutionSuccess{Attempt: 1, At: at(time.Second)}).Error(factum.CodeIllegalArgument) // never prepared
	s.When(ApplyExecutionFailed{Attempt: 0, Error: ErrorInfo{Code: factum.CodeInternalServerError}, Recoverability: RecoverabilityUnknown, At: at(time.Second)}).
		Error(factum.CodeIllegalState)
	aggregatetest.For(t, def).When(PrepareCompensation{At: at(0)}).Error(factum.CodeNotFound)
}
