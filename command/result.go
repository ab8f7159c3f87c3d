package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/factum-go/factum"
)

// Result is what a caller learns about a command at one stage. Callers read
// its fields; Message is for people.
type Result struct {
	// Stage is the stage the result reports.
	Stage factum.CommandStage `json:"stage"`
	// CommandID identifies the command message.
	CommandID string `json:"commandId"`
	// RequestID identifies the business intent.
	RequestID string `json:"requestId"`
	// AggregateID is the command's aggregate (with the ID derived for a
	// create command sent without one).
	AggregateID factum.AggregateID `json:"aggregateId"`
	// AggregateVersion is the aggregate's version after the command's
	// stream, once known (0 before PROCESSED or when nothing was appended).
	AggregateVersion int `json:"aggregateVersion,omitempty"`
	// Function is the function that reported the stage, if any.
	Function factum.Function `json:"function,omitzero"`
	// EventNames lists the names of the events the command appended.
	EventNames []string `json:"eventNames,omitempty"`
	// Code is factum.CodeOk on success.
	Code factum.Code `json:"errorCode"`
	// Message describes a failure.
	Message string `json:"errorMsg,omitempty"`
	// Bindings lists invalid command fields (CommandValidation).
	Bindings []factum.BindingError `json:"bindingErrors,omitempty"`
	// Results holds values functions returned to the caller.
	Results map[string]any `json:"result,omitempty"`
	// Duplicate marks the outcome of an earlier, appended attempt of the
	// same request, returned instead of running it again.
	Duplicate bool `json:"duplicate,omitempty"`
	// Note explains a result the gateway completed itself, such as a
	// branch stage no function consumes.
	Note string `json:"note,omitempty"`
	// SignalTime is when the stage was reached.
	SignalTime time.Time `json:"signalTime"`
}

// Succeeded reports whether the result reports success.
func (r Result) Succeeded() bool { return r.Code == factum.CodeOk || r.Code == "" }

// Err returns nil for a successful result and a *ResultError otherwise.
func (r Result) Err() error {
	if r.Succeeded() {
		return nil
	}
	return newResultError(r, nil)
}

// resultOf turns a wait signal into a result.
func resultOf(s *factum.Signal) Result {
	code := s.Code
	if code == "" {
		code = factum.CodeOk
	}
	return Result{
		Stage:            s.Stage,
		CommandID:        s.CommandID,
		RequestID:        s.RequestID,
		AggregateID:      s.AggregateID,
		AggregateVersion: s.Version,
		Function:         s.Function,
		EventNames:       s.EventNames,
		Code:             code,
		Message:          s.Message,
		Bindings:         s.Bindings,
		Results:          s.Result,
		Duplicate:        s.Duplicate,
		SignalTime:       s.Time,
	}
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
