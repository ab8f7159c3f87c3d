package event

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
)

// Failure is one event function's failure to handle one stream, after its
// in-place retries.
type Failure struct {
	// Function is the function that failed.
	Function factum.Function
	// Stage is the stage the function signals.
	Stage factum.CommandStage
	// Stream is the stream it failed on.
	Stream factum.EventStream
	// EventID is the first event of the stream the function consumes.
	EventID string
	// Err is the last error.
	Err error
	// Attempts is how many times the function was tried.
	Attempts int
	// Time is when the last attempt failed.
	Time time.Time
}

// FailureRecorder records failures durably before the consumer moves past
// them. The compensation package implements it.
type FailureRecorder interface {
	// RecordFailure returns nil only once the failure is durable. On error
	// the consumer does not advance, and delivers the stream again.
	RecordFailure(ctx context.Context, f Failure) error
}

// FailureRecorderFunc adapts a function to FailureRecorder.
type FailureRecorderFunc func(ctx context.Context, f Failure) error

// RecordFailure calls fn.
func (fn FailureRecorderFunc) RecordFailure(ctx context.Context, f Failure) error { return fn(ctx, f) }

// FailureFinder is implemented by failure recorders that can tell from
// their durable records whether fn's handling of stream s failed and is
// not yet resolved. A repeated request waiting for a branch stage asks it
// when the consumer itself no longer remembers (after a restart, say).
type FailureFinder interface {
	// FindFailure returns the recorded, unresolved failure of fn on s, or
	// nil when there is none; err reports that the records could not be
	// read.
	FindFailure(ctx context.Context, fn factum.Function, s *factum.EventStream) (failure error, err error)
}

// EventError attributes a function's error to one event of the stream.
// Functions added with On return it, so a failure names the event to
// re-deliver. An EventID that is not an event of the stream is not
// trusted: the failure is charged to the first event the function
// consumes.
type EventError struct {
	// EventID is the event that failed.
	EventID string
	// Err is the function's error.
	Err error
}

func (e *EventError) Error() string { return fmt.Sprintf("event %s: %v", e.EventID, e.Err) }

// Unwrap returns Err.
func (e *EventError) Unwrap() error { return e.Err }

// failedEventID returns the event of s a failure of h is charged to: the
// one err names (an *EventError) when it is an event of s, else the first
// h consumes. An ID that is not s's is a mistake of the function's:
// charged to it, the failure would be retried as another event's, or
// refused (an ID that is no event's).
func failedEventID(h *Handler, s *factum.EventStream, err error) string {
	if ee, ok := errors.AsType[*EventError](err); ok && ee.EventID != "" {
		for i := range s.Events {
			if s.Events[i].ID == ee.EventID {
				return ee.EventID
			}
		}
	}
	for i := range s.Events {
		if h.Consumes(s.AggregateID.NamedAggregate, s.Events[i].Name) {
			return s.Events[i].ID
		}
	}
	return ""
}
