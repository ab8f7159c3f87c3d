package event

import (
	"context"
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
