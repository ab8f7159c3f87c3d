package saga

import (
	"fmt"

	"github.com/factum-go/factum/command"
)

// RefusedError reports a command a saga sent that its target refused (a
// business rejection, a deleted or unknown target, an invalid command): the
// step did not happen and re-sending it unchanged will not make it happen.
// It carries the refusal's code (factum.CodeOf returns it), so the failure
// recorded for compensation names why.
type RefusedError struct {
	// Command is the refused command's name.
	Command string
	// Result is the refusal as the gateway reported it.
	Result command.Result
	// Err is the gateway's error.
	Err error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("saga: command %s to %s refused: %v", e.Command, e.Result.AggregateID, e.Err)
}

// Unwrap returns the gateway's error, so errors.Is and factum.CodeOf see
// the refusal's code.
func (e *RefusedError) Unwrap() error { return e.Err }

// Retryable reports false: sending the command again at once gets the same
// refusal, so the consumer records the failure without retrying in place.
func (e *RefusedError) Retryable() bool { return false }

// PendingError reports a command a saga sent whose outcome is not known to
// be decided: the wait timed out, the bus pushed back, or the target's
// store failed in a way a retry may cure. Re-sending it (under its derived
// request ID) is safe and is what the consumer's retry and compensation do.
type PendingError struct {
	// Command is the command's name.
	Command string
	// Result is the last result the gateway reported.
	Result command.Result
	// Err is the gateway's error.
	Err error
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("saga: command %s to %s not decided: %v", e.Command, e.Result.AggregateID, e.Err)
}

// Unwrap returns the gateway's error.
func (e *PendingError) Unwrap() error { return e.Err }

// Retryable reports true: re-sending under the derived request ID is safe.
func (e *PendingError) Retryable() bool { return true }
