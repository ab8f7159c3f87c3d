package factum

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Code is a stable error code. Its string value is part of the wire
// contract (HTTP bodies, stored failures, wait signals) and never changes.
type Code string

// The error codes. A caller acts on the code, never on a message's text.
const (
	CodeOk                            Code = "Ok"
	CodeNotFound                      Code = "NotFound"
	CodeBadRequest                    Code = "BadRequest"
	CodeIllegalArgument               Code = "IllegalArgument"
	CodeIllegalState                  Code = "IllegalState"
	CodeRequestTimeout                Code = "RequestTimeout"
	CodeTooManyRequests               Code = "TooManyRequests"
	CodeDuplicateRequestID            Code = "DuplicateRequestId"
	CodeCommandValidation             Code = "CommandValidation"
	CodeEventVersionConflict          Code = "EventVersionConflict"
	CodeDuplicateAggregateID          Code = "DuplicateAggregateId"
	CodeCommandExpectVersionConflict  Code = "CommandExpectVersionConflict"
	CodeSourcingVersionConflict       Code = "SourcingVersionConflict"
	CodeIllegalAccessDeletedAggregate Code = "IllegalAccessDeletedAggregate"
	CodeIllegalAccessOwnerAggregate   Code = "IllegalAccessOwnerAggregate"
	CodeTenantMismatch                Code = "TenantMismatch"
	CodeInternalServerError           Code = "InternalServerError"
	// CodeUnauthorized: the request carries no valid credential.
	CodeUnauthorized Code = "Unauthorized"
	// CodeForbidden: the credential lacks the role the action needs.
	CodeForbidden Code = "Forbidden"
)

// Codes lists every code, in the order of the table above.
var Codes = []Code{
	CodeOk, CodeNotFound, CodeBadRequest, CodeIllegalArgument, CodeIllegalState,
	CodeRequestTimeout, CodeTooManyRequests, CodeDuplicateRequestID,
	CodeCommandValidation, CodeEventVersionConflict, CodeDuplicateAggregateID,
	CodeCommandExpectVersionConflict, CodeSourcingVersionConflict,
	CodeIllegalAccessDeletedAggregate, CodeIllegalAccessOwnerAggregate,
	CodeTenantMismatch, CodeInternalServerError, CodeUnauthorized, CodeForbidden,
}

// Retryable reports whether an error of this code may succeed if the same
// request is tried again unchanged: a timeout, back-pressure, or a version
// conflict the command side resolves by reloading. Business rejections and
// duplicates are not retryable.
func (c Code) Retryable() bool {
	switch c {
	case CodeRequestTimeout, CodeTooManyRequests, CodeEventVersionConflict:
		return true
	}
	return false
}

// Valid reports whether c is one of the defined codes.
func (c Code) Valid() bool {
	for _, k := range Codes {
		if k == c {
			return true
		}
	}
	return false
}

// sentinel is the type of the Err* values: a code alone, matched by
// (*Error).Is.
type sentinel Code

func (s sentinel) Error() string { return "factum: " + string(s) }

// Err returns the sentinel error of the code: the value errors.Is matches
// against every *Error of that code.
func (c Code) Err() error { return sentinel(c) }

// Sentinel errors, one per code, for errors.Is. Any *Error with the same
// code matches, whatever its message and details.
var (
	ErrNotFound                      error = sentinel(CodeNotFound)
	ErrBadRequest                    error = sentinel(CodeBadRequest)
	ErrIllegalArgument               error = sentinel(CodeIllegalArgument)
	ErrIllegalState                  error = sentinel(CodeIllegalState)
	ErrRequestTimeout                error = sentinel(CodeRequestTimeout)
	ErrTooManyRequests               error = sentinel(CodeTooManyRequests)
	ErrDuplicateRequestID            error = sentinel(CodeDuplicateRequestID)
	ErrCommandValidation             error = sentinel(CodeCommandValidation)
	ErrEventVersionConflict          error = sentinel(CodeEventVersionConflict)
	ErrDuplicateAggregateID          error = sentinel(CodeDuplicateAggregateID)
	ErrCommandExpectVersionConflict  error = sentinel(CodeCommandExpectVersionConflict)
	ErrSourcingVersionConflict       error = sentinel(CodeSourcingVersionConflict)
	ErrIllegalAccessDeletedAggregate error = sentinel(CodeIllegalAccessDeletedAggregate)
	ErrIllegalAccessOwnerAggregate   error = sentinel(CodeIllegalAccessOwnerAggregate)
	ErrTenantMismatch                error = sentinel(CodeTenantMismatch)
	ErrInternalServerError           error = sentinel(CodeInternalServerError)
	ErrUnauthorized                  error = sentinel(CodeUnauthorized)
	ErrForbidden                     error = sentinel(CodeForbidden)
)

// ErrClosed is the cause of every error a component returns because it is
// closed or shutting down: the command dispatcher once its shutdown began
// (wrapped in a TooManyRequests error), an event store after Close. A
// package that names its own closed error makes it this value or wraps it,
// so errors.Is(err, ErrClosed) tells use-after-close wherever it comes from.
var ErrClosed = errors.New("factum: closed")

// BindingError describes one invalid field of a command body.
type BindingError struct {
	// Field is the path of the field, such as "items[0].qty".
	Field string `json:"field"`
	// Message says what is wrong with it.
	Message string `json:"message"`
}

// Error is the one error type of factum. It carries a stable code and the
// identities involved, so callers and APIs read fields instead of parsing
// text. Any field but Code may be zero.
type Error struct {
	// Code is the stable error code.
	Code Code `json:"code"`
	// Message is a human-readable description.
	Message string `json:"message,omitempty"`
	// Aggregate is the aggregate involved, if any.
	Aggregate AggregateID `json:"aggregate,omitzero"`
	// Version is the aggregate version involved, if any.
	Version int `json:"version,omitempty"`
	// CommandID is the command involved, if any.
	CommandID string `json:"commandId,omitempty"`
	// RequestID is the request involved, if any.
	RequestID string `json:"requestId,omitempty"`
	// Bindings lists invalid command fields (CommandValidation).
	Bindings []BindingError `json:"bindingErrors,omitempty"`
	// Retryable reports whether the same request may succeed if retried.
	Retryable bool `json:"retryable,omitempty"`
	// Err is the underlying cause, if any; it is not serialised.
	Err error `json:"-"`
}

// Errorf returns an *Error with the code and a formatted message; Retryable
// is the code's default. A %w verb in format sets Err.
func Errorf(code Code, format string, args ...any) *Error {
	wrapped := fmt.Errorf(format, args...)
	e := &Error{Code: code, Message: wrapped.Error(), Retryable: code.Retryable()}
	if u := errors.Unwrap(wrapped); u != nil {
		e.Err = u
	} else if u, ok := wrapped.(interface{ Unwrap() []error }); ok {
		e.Err = errors.Join(u.Unwrap()...)
	}
	return e
}

// NewError returns an *Error with the code and message; Retryable is the
// code's default.
func NewError(code Code, message string) *Error {
	return &Error{Code: code, Message: message, Retryable: code.Retryable()}
}

// IllegalArgument returns an IllegalArgument error: the input is invalid.
func IllegalArgument(message string) *Error { return NewError(CodeIllegalArgument, message) }

// IllegalState returns an IllegalState error: the input is valid but the
// aggregate's state forbids it. Command handlers use it for business rules.
func IllegalState(message string) *Error { return NewError(CodeIllegalState, message) }

// NotFound returns a NotFound error.
func NotFound(message string) *Error { return NewError(CodeNotFound, message) }

// Error formats the code, the message and the identities involved.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("factum: ")
	b.WriteString(string(e.Code))
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Aggregate.ID != "" {
		b.WriteString(" [aggregate ")
		b.WriteString(e.Aggregate.String())
		if e.Version != 0 {
			fmt.Fprintf(&b, " version %d", e.Version)
		}
		b.WriteString("]")
	}
	if e.RequestID != "" {
		b.WriteString(" [request ")
		b.WriteString(e.RequestID)
		b.WriteString("]")
	}
	if e.CommandID != "" {
		b.WriteString(" [command ")
		b.WriteString(e.CommandID)
		b.WriteString("]")
	}
	if e.Err != nil && !strings.Contains(e.Message, e.Err.Error()) {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's code, so that
// errors.Is(err, factum.ErrNotFound) matches every NotFound error.
func (e *Error) Is(target error) bool {
	s, ok := target.(sentinel)
	return ok && Code(s) == e.Code
}

// With returns a copy of e with the aggregate, version and IDs set; zero
// arguments leave the field as it was.
func (e *Error) With(aggregate AggregateID, version int, commandID, requestID string) *Error {
	c := *e
	if aggregate.ID != "" {
		c.Aggregate = aggregate
	}
	if version != 0 {
		c.Version = version
	}
	if commandID != "" {
		c.CommandID = commandID
	}
	if requestID != "" {
		c.RequestID = requestID
	}
	return &c
}

// CodeOf returns the code of err: Ok for nil; the code of the first *Error
// or sentinel in its chain; RequestTimeout for a context deadline;
// InternalServerError for anything else, including a cancelled context,
// whose outcome is unknown.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOk
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	var s sentinel
	if errors.As(err, &s) {
		return Code(s)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return CodeRequestTimeout
	}
	return CodeInternalServerError
}

// AsError returns err as an *Error: the first one in its chain, or a new one
// with CodeOf(err) wrapping err. It returns nil for nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	code := CodeOf(err)
	return &Error{Code: code, Message: err.Error(), Retryable: code.Retryable(), Err: err}
}

// IsRetryable reports whether err says that retrying the same request
// unchanged may succeed.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Retryable
	}
	return CodeOf(err).Retryable()
}

// MessageOf returns the human-readable message of err without the code and
// identity decorations of Error(): what a wait signal or an HTTP error body
// carries next to the code and the identities, which travel as fields. The
// cause is appended when the message does not already say it.
func MessageOf(err error) string {
	if err == nil {
		return ""
	}
	var fe *Error
	if !errors.As(err, &fe) {
		return err.Error()
	}
	msg := fe.Message
	if fe.Err != nil && !strings.Contains(msg, fe.Err.Error()) {
		if msg != "" {
			msg += ": "
		}
		msg += fe.Err.Error()
	}
	if msg == "" {
		msg = string(fe.Code)
	}
	return msg
}
