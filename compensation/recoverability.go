package compensation

import (
	"errors"

	"github.com/factum-go/factum"
)

// RecoverabilityError is implemented by errors that know whether retrying
// may help. An event function returns one (or wraps one) to tell
// compensation; WithRecoverability makes one.
type RecoverabilityError interface {
	error
	Recoverability() Recoverability
}

// WithRecoverability returns err marked with r, for an event function to
// return: compensation records r with the failure, so that, say, an
// Unrecoverable failure is not retried until an operator marks it
// otherwise. The result wraps err (errors.Is and errors.As see through it)
// and keeps its code. A nil err stays nil.
func WithRecoverability(err error, r Recoverability) error {
	if err == nil {
		return nil
	}
	return &markedError{err: err, r: r}
}

type markedError struct {
	err error
	r   Recoverability
}

func (e *markedError) Error() string                  { return e.err.Error() }
func (e *markedError) Unwrap() error                  { return e.err }
func (e *markedError) Recoverability() Recoverability { return e.r }

// RecoverabilityOf classifies err, the default classifier: the mark of
// the first RecoverabilityError in its chain; otherwise Recoverable for an
// error that says it is retryable (factum.IsRetryable: timeouts,
// back-pressure, version conflicts), and RecoverabilityUnknown for the
// rest, which the scheduler still retries.
func RecoverabilityOf(err error) Recoverability {
	if err == nil {
		return RecoverabilityUnknown
	}
	var re RecoverabilityError
	if errors.As(err, &re) {
		if r := re.Recoverability(); r.Valid() {
			return r
		}
	}
	if factum.IsRetryable(err) {
		return Recoverable
	}
	return RecoverabilityUnknown
}
