package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/factum-go/factum"
)

// Result is what a caller learns about a command at one stage: the
// factum.Signal that reached its wait, with the methods a caller needs.
// Callers read its fields; Message is for people.
type Result factum.Signal

// Succeeded reports whether the result reports success.
func (r Result) Succeeded() bool { return factum.Signal(r).Succeeded() }

// Err returns nil for a successful result and a *ResultError otherwise.
func (r Result) Err() error {
	if r.Succeeded() {
		return nil
	}
	return newResultError(r, nil)
}

// resultOf is the result a wait signal gives its caller: the signal
// itself, with an empty code read as success.
func resultOf(s *factum.Signal) Result {
	r := Result(*s)
	if r.Code == "" {
		r.Code = factum.CodeOk
	}
	return r
}

// ResultError is a failed Result as an error. errors.Is matches it against
// the factum.Err* sentinel of its code, factum.CodeOf returns its code, and
// errors.As finds the *factum.Error with the identities involved. A wait
// that ended by the caller's deadline or cancellation also matches
// context.DeadlineExceeded or context.Canceled.
type ResultError struct {
	// Result is the failed result, with every field the caller needs.
	Result Result
	err    *factum.Error
}

func newResultError(r Result, cause error) *ResultError {
	e := &factum.Error{
		Code:      r.Code,
		Message:   r.Message,
		Aggregate: r.AggregateID,
		Version:   r.AggregateVersion,
		CommandID: r.CommandID,
		RequestID: r.RequestID,
		Bindings:  r.Bindings,
		Retryable: r.Code.Retryable(),
		Err:       cause,
	}
	return &ResultError{Result: r, err: e}
}

// Error formats the stage, the code and the message.
func (e *ResultError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "command %s at %s: %s", e.Result.CommandID, e.Result.Stage, e.Result.Code)
	if e.Result.Message != "" {
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(e.Result.Message, "factum: "+string(e.Result.Code)+": "))
	}
	return b.String()
}

// Unwrap returns the *factum.Error the result describes.
func (e *ResultError) Unwrap() error { return e.err }

// failure returns a failed result and its error for a command that did not
// get past stage.
func failure(stage factum.CommandStage, cmd *factum.Command, err error) (Result, error) {
	fe := factum.AsError(err)
	r := Result{
		Stage:       stage,
		CommandID:   cmd.ID,
		RequestID:   cmd.RequestIDOrID(),
		AggregateID: cmd.AggregateID,
		Code:        fe.Code,
		Message:     fe.Message,
		Bindings:    fe.Bindings,
		SignalTime:  time.Now(),
	}
	return r, newResultError(r, fe.Err)
}
