package compensation

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// TestRefusalsAndTheirOrder pins the execution's refusals, code and text,
// and which check refuses first: a retry's command checks its time before
// the execution's success, and an operator's change checks the command
// before the execution's success.
func TestRefusalsAndTheirOrder(t *testing.T) {
	ctx := context.Background()
	open := created()
	done := created()
	done.Status, done.SucceededAt = StatusSucceeded, at(70*time.Second)
	const succeeded = "execution succeeded at 2026-03-01T12:01:10.000Z: cannot "
	badSpec := RetrySpec{MaxRetries: -1, MinBackoff: time.Minute, ExecutionTimeout: time.Second}
	badFn := factum.Function{Context: "shop", Processor: "summaries"}
	tests := []struct {
		name     string
		decide   func() ([]any, error)
		wantCode factum.Code
		wantMsg  string
		wantEv   any // the event when not refused
	}{
		{"prepare without a time", func() ([]any, error) { return decidePrepare(ctx, done, prepareCompensation{}) },
			factum.CodeIllegalArgument, "command time (at) is missing", nil},
		{"prepare a succeeded one", func() ([]any, error) { return decidePrepare(ctx, done, prepareCompensation{At: at(time.Hour)}) },
			factum.CodeIllegalState, succeeded + "prepare a retry", nil},
		{"force without a time", func() ([]any, error) { return decideForcePrepare(ctx, done, forcePrepareCompensation{}) },
			factum.CodeIllegalArgument, "command time (at) is missing", nil},
		{"force a succeeded one", func() ([]any, error) {
			return decideForcePrepare(ctx, done, forcePrepareCompensation{At: at(time.Hour)})
		}, factum.CodeIllegalState, succeeded + "force a retry", nil},
		{"success without a time", func() ([]any, error) { return decideSuccess(ctx, done, applyExecutionSuccess{Attempt: 1}) },
			factum.CodeIllegalArgument, "command time (at) is missing", nil},
		{"success of a succeeded one", func() ([]any, error) {
			return decideSuccess(ctx, done, applyExecutionSuccess{Attempt: 1, At: at(time.Hour)})
		}, factum.CodeIllegalState, succeeded + "apply another success", nil},
		{"bad spec of a succeeded one", func() ([]any, error) {
			return decideRetrySpec(ctx, done, applyExecutionRetrySpec{RetrySpec: badSpec})
		}, factum.CodeIllegalArgument, "retry spec: max retries -1 is negative", nil},
		{"spec of a succeeded one", func() ([]any, error) { return decideRetrySpec(ctx, done, applyExecutionRetrySpec{RetrySpec: spec}) },
			factum.CodeIllegalState, succeeded + "change the retry spec", nil},
		{"spec", func() ([]any, error) { return decideRetrySpec(ctx, open, applyExecutionRetrySpec{RetrySpec: spec}) },
			"", "", executionRetrySpecApplied{RetrySpec: spec}},
		{"bad recoverability of a succeeded one", func() ([]any, error) {
			return decideRecoverable(ctx, done, markExecutionRecoverable{Recoverability: "recoverable"})
		}, factum.CodeIllegalArgument, `recoverability "recoverable": want RECOVERABLE, UNRECOVERABLE or UNKNOWN`, nil},
		{"empty recoverability", func() ([]any, error) { return decideRecoverable(ctx, open, markExecutionRecoverable{}) },
			factum.CodeIllegalArgument, `recoverability "": want RECOVERABLE, UNRECOVERABLE or UNKNOWN`, nil},
		{"recoverability of a succeeded one", func() ([]any, error) {
			return decideRecoverable(ctx, done, markExecutionRecoverable{Recoverability: Unrecoverable})
		}, factum.CodeIllegalState, succeeded + "change the recoverability", nil},
		{"recoverability", func() ([]any, error) {
			return decideRecoverable(ctx, open, markExecutionRecoverable{Recoverability: Unrecoverable})
		}, "", "", executionRecoverableMarked{Recoverability: Unrecoverable}},
		{"bad function of a succeeded one", func() ([]any, error) {
			return decideFunction(ctx, done, changeExecutionFunction{Function: badFn})
		}, factum.CodeIllegalArgument, "function name is empty", nil},
		{"function of a succeeded one", func() ([]any, error) { return decideFunction(ctx, done, changeExecutionFunction{Function: testFn}) },
			factum.CodeIllegalState, succeeded + "change the function", nil},
		{"function", func() ([]any, error) { return decideFunction(ctx, open, changeExecutionFunction{Function: testFn}) },
			"", "", executionFunctionChanged{Function: testFn}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := tt.decide()
			if tt.wantEv != nil {
				if err != nil || !reflect.DeepEqual(evs, []any{tt.wantEv}) {
					t.Fatalf("%#v, %v; want %#v", evs, err, tt.wantEv)
				}
				return
			}
			if factum.CodeOf(err) != tt.wantCode || factum.MessageOf(err) != tt.wantMsg || evs != nil {
				t.Fatalf("%v, %v; want %s %q", evs, err, tt.wantCode, tt.wantMsg)
			}
		})
	}
}

// TestFilterValues pins how a Filter's statuses and recoverabilities become
// a condition, and the refusal naming the first invalid one.
func TestFilterValues(t *testing.T) {
	tests := []struct {
		name    string
		f       Filter
		want    query.Condition
		wantErr string
	}{
		{"statuses", Filter{Status: []Status{StatusFailed, StatusPrepared}}, query.In("state.status", "FAILED", "PREPARED"), ""},
		{"recoverabilities", Filter{Recoverability: []Recoverability{Unrecoverable, RecoverabilityUnknown}},
			query.In("state.recoverable", "UNRECOVERABLE", "UNKNOWN"), ""},
		{"both", Filter{Status: []Status{StatusSucceeded}, Recoverability: []Recoverability{Recoverable}},
			query.And(query.In("state.status", "SUCCEEDED"), query.In("state.recoverable", "RECOVERABLE")), ""},
		{"a lower-case status", Filter{Status: []Status{StatusFailed, "prepared", "nope"}}, query.Condition{},
			`status "prepared": want FAILED, PREPARED or SUCCEEDED`},
		{"an empty recoverability", Filter{Recoverability: []Recoverability{Recoverable, ""}}, query.Condition{},
			`recoverability "": want RECOVERABLE, UNRECOVERABLE or UNKNOWN`},
		{"statuses before recoverabilities", Filter{Status: []Status{"x"}, Recoverability: []Recoverability{"y"}}, query.Condition{},
			`status "x": want FAILED, PREPARED or SUCCEEDED`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f.Condition()
			if tt.wantErr != "" {
				if factum.CodeOf(err) != factum.CodeIllegalArgument || factum.MessageOf(err) != tt.wantErr {
					t.Fatalf("%v, want IllegalArgument %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("%#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}
