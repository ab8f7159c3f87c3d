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

func recordCmd(d time.Duration, r Recoverability) recordExecutionFailure {
	return recordExecutionFailure{
		FailedEvent: FailedEvent{EventID: "ev-1", EventName: "order_placed", Aggregate: factum.NamedAggregate{Context: "shop", Aggregate: "order"}.WithID("o-1"),
			Version: 3, Function: testFn, Stage: factum.StageProjected},
		Error: ErrorInfo{Code: factum.CodeInternalServerError, Message: "boom"}, RetrySpec: spec, Recoverability: r, At: at(d),
	}
}

func created() Execution {
	c := recordCmd(0, RecoverabilityUnknown)
	return Execution{
		FailedEvent: c.FailedEvent, Status: StatusFailed, Recoverability: RecoverabilityUnknown, Retryable: true,
		Error: c.Error, RetrySpec: spec, Failures: 1, CreatedAt: at(0), FailedAt: at(0),
		NextRetryAt: at(time.Minute), DueAt: at(time.Minute),
	}
}

func TestExecutionLifecycle(t *testing.T) {
	def := newDefinition("shop", AggregateName)
	aggregatetest.For(t, def).
		When(recordCmd(0, RecoverabilityUnknown)).
		Events(executionFailedCreated(recordCmd(0, RecoverabilityUnknown))).
		State(created()).Version(1).
		Fork("not due before the backoff", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
			s.When(prepareCompensation{At: at(59 * time.Second)}).Error(factum.CodeIllegalState)
		}).
		Fork("prepare when due, then fail, then succeed", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
			want := created()
			want.Status, want.Retries = StatusPrepared, 1
			want.RetryAt, want.TimeoutAt, want.NextRetryAt = at(time.Minute), at(time.Minute+30*time.Second), at(3*time.Minute)
			want.DueAt = want.TimeoutAt
			s.When(prepareCompensation{At: at(time.Minute)}).
				Events(compensationPrepared{Retries: 1, RetryAt: at(time.Minute), TimeoutAt: at(90 * time.Second), NextRetryAt: at(3 * time.Minute)}).
				State(want).Version(2).
				Fork("in flight until its timeout", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
					s.When(prepareCompensation{At: at(89 * time.Second)}).Error(factum.CodeIllegalState)
					s.When(forcePrepareCompensation{At: at(89 * time.Second)}).Error(factum.CodeIllegalState)
				}).
				Fork("timed out: due again", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
					s.When(prepareCompensation{At: at(90 * time.Second)}).
						Events(compensationPrepared{Retries: 2, RetryAt: at(90 * time.Second), TimeoutAt: at(2 * time.Minute), NextRetryAt: at(90*time.Second + 4*time.Minute)}).
						StateMatches(func(t testing.TB, e Execution) {
							if e.Retryable || e.Retries != 2 {
								t.Errorf("after the last retry: retryable %v retries %d", e.Retryable, e.Retries)
							}
						}).
						Then().
						When(applyExecutionFailed{Attempt: 1, Error: ErrorInfo{Code: factum.CodeInternalServerError}, Recoverability: RecoverabilityUnknown, At: at(3 * time.Minute)}).
						Error(factum.CodeIllegalState) // the stale attempt is fenced off
				}).
				Fork("failure", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
					fail := applyExecutionFailed{Attempt: 1, Error: ErrorInfo{Code: factum.CodeRequestTimeout, Message: "slow"}, Recoverability: Recoverable, At: at(80 * time.Second)}
					s.When(fail).Events(executionFailedApplied(fail)).
						StateMatches(func(t testing.TB, e Execution) {
							if e.Status != StatusFailed || e.Failures != 2 || e.Error.Message != "slow" || e.Recoverability != Recoverable || e.DueAt != at(3*time.Minute) || !e.Retryable {
								t.Errorf("after a failed retry: %+v", e)
							}
						}).
						Then().
						When(prepareCompensation{At: at(3 * time.Minute)}).EventTypes(compensationPrepared{}).
						Then().
						When(prepareCompensation{At: at(time.Hour)}).Error(factum.CodeIllegalState) // in flight
				}).
				Fork("success is terminal", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
					s.When(applyExecutionSuccess{Attempt: 1, At: at(70 * time.Second)}).
						Events(executionSuccessApplied{Attempt: 1, At: at(70 * time.Second)}).
						StateMatches(func(t testing.TB, e Execution) {
							if e.Status != StatusSucceeded || e.Retryable || !e.DueAt.IsZero() {
								t.Errorf("after success: %+v", e)
							}
						}).
						Fork("nothing more to retry or change", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
							s.When(applyExecutionSuccess{Attempt: 1, At: at(time.Hour)}).Error(factum.CodeIllegalState)
							s.When(forcePrepareCompensation{At: at(time.Hour)}).Error(factum.CodeIllegalState)
							s.When(prepareCompensation{At: at(time.Hour)}).Error(factum.CodeIllegalState)
							s.When(applyExecutionRetrySpec{RetrySpec: spec}).Error(factum.CodeIllegalState)
							s.When(markExecutionRecoverable{Recoverability: Recoverable}).Error(factum.CodeIllegalState)
							s.When(changeExecutionFunction{Function: testFn}).Error(factum.CodeIllegalState)
						}).
						Fork("a new failure reopens it", func(t *testing.T, s *aggregatetest.Spec[Execution]) {
							s.When(recordCmd(time.Hour, RecoverabilityUnknown)).
								Events(executionFailureRecorded{Error: recordCmd(0, "").Error, Recoverability: RecoverabilityUnknown,
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
				EventTypes(executionFailureRecorded{}).
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
		Given(executionFailedCreated(recordCmd(0, RecoverabilityUnknown))).
		Given(compensationPrepared{Retries: 1, RetryAt: at(time.Minute), TimeoutAt: at(90 * time.Second), NextRetryAt: at(3 * time.Minute)}).
		Given(executionFailedApplied{Attempt: 1, Error: ErrorInfo{Code: factum.CodeInternalServerError}, Recoverability: RecoverabilityUnknown, At: at(80 * time.Second)}).
		Given(compensationPrepared{Retries: 2, RetryAt: at(3 * time.Minute), TimeoutAt: at(210 * time.Second), NextRetryAt: at(7 * time.Minute)}).
		Given(executionFailedApplied{Attempt: 2, Error: ErrorInfo{Code: factum.CodeInternalServerError}, Recoverability: RecoverabilityUnknown, At: at(200 * time.Second)})

	exhausted.When(prepareCompensation{At: at(time.Hour)}).Error(factum.CodeIllegalState)
	exhausted.When(forcePrepareCompensation{At: at(time.Hour)}).
		Events(compensationPrepared{Retries: 3, Forced: true, RetryAt: at(time.Hour), TimeoutAt: at(time.Hour + 30*time.Second), NextRetryAt: at(time.Hour + 8*time.Minute)})
	exhausted.When(applyExecutionRetrySpec{RetrySpec: RetrySpec{MaxRetries: 5, MinBackoff: time.Second, ExecutionTimeout: time.Second}}).
		StateMatches(func(t testing.TB, e Execution) {
			if !e.Retryable || e.RetrySpec.MaxRetries != 5 {
				t.Errorf("a higher limit makes it retryable again: %+v", e)
			}
		}).
		Then().When(prepareCompensation{At: at(time.Hour)}).EventTypes(compensationPrepared{})

	unrecoverable := aggregatetest.For(t, def).Given(executionFailedCreated(recordCmd(0, Unrecoverable)))
	unrecoverable.When(prepareCompensation{At: at(time.Hour)}).Error(factum.CodeIllegalState)
	unrecoverable.When(markExecutionRecoverable{Recoverability: Recoverable}).
		Events(executionRecoverableMarked{Recoverability: Recoverable}).
		Then().When(prepareCompensation{At: at(time.Hour)}).EventTypes(compensationPrepared{})
	unrecoverable.When(forcePrepareCompensation{At: at(time.Second)}).EventTypes(compensationPrepared{})

	other := factum.Function{Context: "shop", Processor: "summaries_v2", Name: "on_order_placed"}
	unrecoverable.When(changeExecutionFunction{Function: other}).
		StateMatches(func(t testing.TB, e Execution) {
			if e.Function != other {
				t.Errorf("function = %v", e.Function)
			}
		})
}

func TestExecutionRefusesBadInput(t *testing.T) {
	def := newDefinition("shop", AggregateName)
	bad := func(mut func(*recordExecutionFailure)) recordExecutionFailure {
		c := recordCmd(0, RecoverabilityUnknown)
		mut(&c)
		return c
	}
	for name, cmd := range map[string]recordExecutionFailure{
		"no event":          bad(func(c *recordExecutionFailure) { c.EventID = "" }),
		"bad aggregate":     bad(func(c *recordExecutionFailure) { c.Aggregate.ID = "" }),
		"version 0":         bad(func(c *recordExecutionFailure) { c.Version = 0 }),
		"bad function":      bad(func(c *recordExecutionFailure) { c.Function.Name = "" }),
		"ok code":           bad(func(c *recordExecutionFailure) { c.Error.Code = factum.CodeOk }),
		"unknown code":      bad(func(c *recordExecutionFailure) { c.Error.Code = "Nope" }),
		"negative retries":  bad(func(c *recordExecutionFailure) { c.RetrySpec.MaxRetries = -1 }),
		"zero backoff":      bad(func(c *recordExecutionFailure) { c.RetrySpec.MinBackoff = 0 }),
		"bad recoverable":   bad(func(c *recordExecutionFailure) { c.Recoverability = "MAYBE" }),
		"no time":           bad(func(c *recordExecutionFailure) { c.At = Time{} }),
		"zero exec timeout": bad(func(c *recordExecutionFailure) { c.RetrySpec.ExecutionTimeout = 0 }),
	} {
		t.Run(name, func(t *testing.T) {
			aggregatetest.For(t, def).When(cmd).Error(factum.CodeIllegalArgument).Version(0)
		})
	}
	s := aggregatetest.For(t, def).Given(executionFailedCreated(recordCmd(0, RecoverabilityUnknown)))
	s.When(prepareCompensation{}).Error(factum.CodeIllegalArgument)
	s.When(markExecutionRecoverable{Recoverability: "yes"}).Error(factum.CodeIllegalArgument)
	s.When(applyExecutionRetrySpec{}).Error(factum.CodeIllegalArgument)
	s.When(changeExecutionFunction{Function: factum.Function{Context: "shop"}}).Error(factum.CodeIllegalArgument)
	s.When(applyExecutionSuccess{Attempt: 1, At: at(time.Second)}).Error(factum.CodeIllegalArgument) // never prepared
	s.When(applyExecutionFailed{Attempt: 0, Error: ErrorInfo{Code: factum.CodeInternalServerError}, Recoverability: RecoverabilityUnknown, At: at(time.Second)}).
		Error(factum.CodeIllegalState)
	aggregatetest.For(t, def).When(prepareCompensation{At: at(0)}).Error(factum.CodeNotFound)
}
