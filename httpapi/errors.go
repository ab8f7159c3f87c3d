package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// ErrorBody is the JSON body of every error response. Code is the stable
// factum code that decides the status (Status); the
// identities say which aggregate, version and messages were involved.
type ErrorBody struct {
	// Code is the stable error code.
	Code factum.Code `json:"code"`
	// Message is for people.
	Message string `json:"message"`
	// BindingErrors lists invalid command fields (CommandValidation).
	BindingErrors []factum.BindingError `json:"bindingErrors,omitempty"`
	// AggregateID is the aggregate involved, if any.
	AggregateID factum.AggregateID `json:"aggregateId,omitzero"`
	// Version is the aggregate version involved, if any.
	Version int `json:"version,omitempty"`
	// CommandID is the command involved, if any.
	CommandID string `json:"commandId,omitempty"`
	// RequestID is the request involved, if any: after a RequestTimeout,
	// look it up at …/request/{requestId}.
	RequestID string `json:"requestId,omitempty"`
	// Retryable reports whether the same request may succeed if retried.
	Retryable bool `json:"retryable,omitempty"`
}

// errPayloadTooLarge marks a body over the limit; it is the one error
// whose status (413) is not its code's.
var errPayloadTooLarge = errors.New("httpapi: request body too large")

// bodyOf builds the error body of err, reading a failed command Result
// when there is one.
func bodyOf(err error) ErrorBody {
	var re *command.ResultError
	if errors.As(err, &re) {
		r := re.Result
		return ErrorBody{
			Code: r.Code, Message: r.Message, BindingErrors: r.Bindings,
			AggregateID: r.AggregateID, Version: r.AggregateVersion,
			CommandID: r.CommandID, RequestID: r.RequestID,
			Retryable: factum.IsRetryable(err),
		}
	}
	fe := factum.AsError(err)
	return ErrorBody{
		Code: fe.Code, Message: fe.Message, BindingErrors: fe.Bindings,
		AggregateID: fe.Aggregate, Version: fe.Version,
		CommandID: fe.CommandID, RequestID: fe.RequestID, Retryable: fe.Retryable,
	}
}

// statusOf returns the HTTP status of err: its code's, from the one table.
func statusOf(err error) int {
	if errors.Is(err, errPayloadTooLarge) {
		return http.StatusRequestEntityTooLarge
	}
	return Status(factum.CodeOf(err))
}

// writeError writes err as an ErrorBody with its status: 503 with
// Retry-After for an error that says a dependency is unreachable.
func writeError(w http.ResponseWriter, err error) {
	if status := unavailableStatus(w, err); status != 0 {
		writeJSON(w, status, bodyOf(err))
		return
	}
	writeJSON(w, statusOf(err), bodyOf(err))
}

// writeJSON writes v as the JSON body with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorBody{Code: factum.CodeInternalServerError, Message: "response does not encode: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
