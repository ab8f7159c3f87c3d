package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/projection"
)

// Statement is one statement of a batch.
type Statement struct {
	SQL  string
	Args []any
}

// BatchExecutor is an Executor that can send statements together: a
// backend whose transaction's executor implements it runs a projection's
// queued statements with ExecBatch, one round trip for all (PostgreSQL's
// pipeline); without it they run one by one.
type BatchExecutor interface {
	Executor
	// ExecBatch runs stmts in order and returns the rows each affected.
	// On an error, rows holds those that ran before the one that failed,
	// stmts[len(rows)], whose error err is, or, when err is a
	// *BatchError, stmts[Index]; those after it did not take effect (the
	// transaction is to be rolled back). An error with the rows of every
	// statement is the round trip's, after they all ran.
	ExecBatch(ctx context.Context, stmts []Statement) (rows []int64, err error)
}

// BatchError is ExecBatch's error when the statement that failed is not
// the one after those that ran: the database refused stmts[Index] before
// running any of the batch (it cannot prepare it, or its arguments cannot
// be encoded), so the failure is that statement's, not the first one's.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("statement %d of the batch: %v", e.Index, e.Err)
}

// Unwrap returns the statement's error.
func (e *BatchError) Unwrap() error { return e.Err }

// queuedStatement is a statement waiting in a projection's transaction:
// the projection's own (index, from 0, counts the transaction's
// Tx.Queue calls; check is its Check), or the store's (index -1, what
// names it in an error).
type queuedStatement struct {
	Statement
	index int
	check func(rows int64) error
	what  string
}

// txQueue is a projection transaction's executor: every statement it runs
// first runs the queued ones, so statements take effect in the order the
// projection gave them.
type txQueue struct {
	raw     Executor
	d       *Dialect
	pending []queuedStatement
	queued  int
	// failed is the first queued statement's failure, which the
	// transaction keeps returning (the database refuses anything more in
	// a failed transaction, and the runner must charge the right stream).
	failed error
}

func (q *txQueue) add(s queuedStatement) { q.pending = append(q.pending, s) }

// queue adds one of the projection's statements.
func (q *txQueue) queue(s projection.Statement) {
	q.add(queuedStatement{Statement: Statement{SQL: s.SQL, Args: s.Args}, index: q.queued, check: s.Check})
	q.queued++
}

// flush runs the pending statements: in one ExecBatch when the backend
// has it, else one by one.
func (q *txQueue) flush(ctx context.Context) error {
	if q.failed != nil {
		return q.failed
	}
	if len(q.pending) == 0 {
		return nil
	}
	pending := q.pending
	q.pending = nil
	var rows []int64
	var err error
	if b, ok := q.raw.(BatchExecutor); ok && len(pending) > 1 {
		stmts := make([]Statement, len(pending))
		for i := range pending {
			stmts[i] = pending[i].Statement
		}
		rows, err = b.ExecBatch(ctx, stmts)
	} else {
		rows = make([]int64, 0, len(pending))
		for i := range pending {
			var n int64
			if n, err = q.raw.Exec(ctx, pending[i].SQL, pending[i].Args...); err != nil {
				break
			}
			rows = append(rows, n)
		}
	}
	// A failed Check comes before a later statement's error: the
	// statements run in order, so the check's is the first failure.
	for i, n := range rows {
		if pending[i].check == nil {
			continue
		}
		if cerr := runCheck(pending[i].check, n); cerr != nil {
			q.failed = &projection.QueuedError{Index: pending[i].index, Err: cerr}
			return q.failed
		}
	}
	if err == nil {
		return nil
	}
	at := len(rows)
	if be, ok := errors.AsType[*BatchError](err); ok && be.Index >= at && be.Index < len(pending) {
		at, err = be.Index, be.Err
	}
	if at >= len(pending) {
		// Every statement ran, and then the round trip failed (pgx reads
		// the pipeline's end at Close): no statement's failure, the
		// transaction's.
		q.failed = fmt.Errorf("%s: run %d queued statements: %w", q.d.Name, len(pending), err)
		return q.failed
	}
	s := pending[at]
	if s.index < 0 {
		q.failed = fmt.Errorf("%s: %s: %w", q.d.Name, s.what, err)
	} else {
		q.failed = &projection.QueuedError{Index: s.index, Err: err}
	}
	return q.failed
}

// runCheck calls check, turning a panic into an InternalServerError: a
// Check runs where the queue runs (at the commit, outside the function,
// whose panics the runner catches), and its panic is its stream's failure
// as its error is.
func runCheck(check func(rows int64) error, rows int64) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = factum.Errorf(factum.CodeInternalServerError, "the check of a queued statement panicked: %v", v)
		}
	}()
	return check(rows)
}

func (q *txQueue) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if err := q.flush(ctx); err != nil {
		return 0, err
	}
	return q.raw.Exec(ctx, query, args...)
}

func (q *txQueue) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	if err := q.flush(ctx); err != nil {
		return nil, err
	}
	return q.raw.Query(ctx, query, args...)
}

func (q *txQueue) QueryRow(ctx context.Context, query string, args ...any) Row {
	if err := q.flush(ctx); err != nil {
		return errRow{err}
	}
	return q.raw.QueryRow(ctx, query, args...)
}

// errRow is a row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// Queue implements projection.Tx.
func (t *ProjectionTx) Queue(s projection.Statement) { t.tx.queue(s) }

// Queued implements projection.Txn.
func (t *ProjectionTx) Queued() int { return t.tx.queued }

// Flush implements projection.Txn.
func (t *ProjectionTx) Flush(ctx context.Context) error { return t.tx.flush(ctx) }

// Failed implements projection.Txn.
func (t *ProjectionTx) Failed() error {
	var qe *projection.QueuedError
	if errors.As(t.tx.failed, &qe) {
		return qe
	}
	return nil
}
