package nats

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnavailable is matched (errors.Is) by every UnavailableError: the
// command bus could not reach NATS or the owner of the command's
// partition, so the command was not accepted.
var ErrUnavailable = errors.New("nats: command bus unavailable")

// UnavailableError is the cause of a send the bus refused because NATS or
// the partition's owner is unreachable. The command was not accepted
// (except after a publish whose acknowledgement was lost: it may be
// stored then; JetStream de-duplicates a command sent alone again with
// the same command ID, and the partition's owner processes a command
// stored twice once, finding it by its request ID in the event store, as
// it does a command delivered again: the way of one that traveled in a
// batch), so sending it again is safe; the error carries the code
// TooManyRequests (retryable) and HTTP answers it with 503 and
// Retry-After.
type UnavailableError struct {
	// Partition is the command's partition.
	Partition int
	// Owner is the instance named in the partition's lease, if any.
	Owner string
	// Reason says what is unreachable.
	Reason string
	// After is how long to wait before sending again.
	After time.Duration
	// Err is the underlying cause, if any.
	Err error
}

func (e *UnavailableError) Error() string {
	s := fmt.Sprintf("command bus unavailable for partition %d: %s", e.Partition, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrUnavailable and the cause.
func (e *UnavailableError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrUnavailable}
	}
	return []error{ErrUnavailable, e.Err}
}

// RetryAfter returns how long to wait before sending again: what HTTP
// puts in Retry-After.
func (e *UnavailableError) RetryAfter() time.Duration { return e.After }
