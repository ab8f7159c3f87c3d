package loadgen

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/factum-go/factum"
)

// TransportError marks a failure to exchange a request with the server at
// all (refused, reset, timed out, a malformed answer): the server gave no
// answer with a code, so the failure is not the server's InternalServerError
// or any other code. Ops wrap such errors in it.
type TransportError struct{ Err error }

// Error implements error.
func (e *TransportError) Error() string { return "transport: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// Cause names the cause of a failed operation for the report: the factum
// code of an answer that carried one ("CommandExpectVersionConflict"), a
// transport cause ("transport: connection refused"), "canceled" when the
// run was stopped, or "other" for an error that is neither.
func Cause(err error) string {
	var te *TransportError
	var fe *factum.Error
	switch {
	case errors.As(err, &te):
		return "transport: " + transportCause(te.Err)
	case errors.As(err, &fe):
		return string(fe.Code)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	for _, c := range factum.Codes {
		if errors.Is(err, c.Err()) {
			return string(c)
		}
	}
	return "other"
}

func transportCause(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "name resolution"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Op + " failed"
	}
	return "bad answer"
}
