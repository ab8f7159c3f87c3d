package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/factum-go/factum/projection"
)

// ResultRows are the rows of a projection's read query, as ReadResult
// takes them: each row's values, in the order of the columns.
type ResultRows interface {
	Next() bool
	Values() ([]any, error)
	Err() error
	Close()
}

// ReadResult returns at most limit of rows, whose columns are cols, as a
// projection.Result (Truncated when there were more), and closes rows.
func ReadResult(cols []string, rows ResultRows, limit int) (projection.Result, error) {
	defer rows.Close()
	res := projection.Result{Columns: cols, Rows: []map[string]any{}}
	for rows.Next() {
		if len(res.Rows) == limit {
			res.Truncated = true
			break
		}
		vals, err := rows.Values()
		if err != nil {
			return projection.Result{}, err
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c] = vals[i]
		}
		res.Rows = append(res.Rows, row)
	}
	rows.Close()
	return res, rows.Err()
}

// StdBegin returns the BeginFunc of projection transactions on a
// database/sql pool: each is a transaction of write, whose statements
// run prepared where cache holds them.
func StdBegin(write *sql.DB, cache *StmtCache) BeginFunc {
	return func(ctx context.Context) (Executor, any, func(context.Context, bool) error, error) {
		tx, err := write.BeginTx(ctx, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		return StdTxCached(tx, cache), tx, func(_ context.Context, commit bool) error {
			if commit {
				return tx.Commit()
			}
			if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
				return err
			}
			return nil
		}, nil
	}
}

// StdRead returns the ReadFunc of projection queries on a database/sql
// pool.
func StdRead(read *sql.DB) ReadFunc {
	return func(ctx context.Context, limit int, query string, args ...any) (projection.Result, error) {
		rows, err := read.QueryContext(ctx, query, args...)
		if err != nil {
			return projection.Result{}, err
		}
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return projection.Result{}, err
		}
		return ReadResult(cols, &stdValues{rows: rows, vals: make([]any, len(cols)), ptrs: make([]any, len(cols))}, limit)
	}
}

// stdValues gives *sql.Rows the Values of ResultRows, scanning each row
// into vals.
type stdValues struct {
	rows       *sql.Rows
	vals, ptrs []any
}

func (r *stdValues) Next() bool { return r.rows.Next() }
func (r *stdValues) Err() error { return r.rows.Err() }
func (r *stdValues) Close()     { _ = r.rows.Close() }

func (r *stdValues) Values() ([]any, error) {
	for i := range r.vals {
		r.ptrs[i] = &r.vals[i]
	}
	if err := r.rows.Scan(r.ptrs...); err != nil {
		return nil, err
	}
	return r.vals, nil
}
