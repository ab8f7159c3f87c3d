package projection

import (
	"errors"
	"fmt"
)

// Statement is a statement queued with Tx.Queue: its SQL, in the
// database's own dialect, and its arguments. The queue keeps Args as they
// are until the statement runs (at the next Exec, QueryRow or Flush, or at
// the commit): a function must not reuse the slice for another statement.
type Statement struct {
	SQL  string
	Args []any
	// Check, when set, receives the number of rows the statement
	// affected once it ran; its error fails the stream that queued it,
	// as the statement's own error does (an UPDATE that must find its
	// row: func(n int64) error { if n != 1 { return … }; return nil }).
	Check func(rows int64) error
}

// QueuedError is the failure of a statement queued with Tx.Queue (its
// error or its Check's), which surfaces where the queue runs: at the
// transaction's next Exec, QueryRow or Flush, or at the commit. Index
// counts the statements queued in the transaction from 0 (Txn.Queued),
// so that the runner charges the failure to the stream that queued it.
type QueuedError struct {
	Index int
	Err   error
}

func (e *QueuedError) Error() string {
	return fmt.Sprintf("queued statement %d: %v", e.Index, e.Err)
}

// Unwrap returns the statement's error.
func (e *QueuedError) Unwrap() error { return e.Err }

// owner returns the index in the batch of the stream whose function
// queued the statement that err (a QueuedError, possibly wrapped) says
// failed, given the streams applied in order and, for each, how many
// statements the transaction had queued before its function ran; or
// current, the stream whose function returned err, when err is no
// queued statement's failure.
func owner(err error, applied []queuedFrom, current int) int {
	var qe *QueuedError
	if !errors.As(err, &qe) {
		return current
	}
	for k := len(applied) - 1; k >= 0; k-- {
		if applied[k].queued <= qe.Index {
			return applied[k].stream
		}
	}
	return current
}

// queuedFrom records that the function of stream (an index in the
// batch) ran when the transaction had queued statements already.
type queuedFrom struct {
	stream, queued int
}
