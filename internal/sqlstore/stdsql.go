package sqlstore

import (
	"context"
	"database/sql"
)

// StdDB is an Executor over a database/sql pool.
func StdDB(db *sql.DB) Executor { return stdDB{db} }

// CloseAll closes the statements and returns the first error.
func CloseAll(prepared map[string]*sql.Stmt) error {
	var first error
	for _, st := range prepared {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

type stdDB struct{ db *sql.DB }

func (e stdDB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return affected(e.db.ExecContext(ctx, query, args...))
}

func (e stdDB) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := e.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return stdRows{rows}, nil
}

func (e stdDB) QueryRow(ctx context.Context, query string, args ...any) Row {
	return e.db.QueryRowContext(ctx, query, args...)
}

// affected is the row count of a result.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// stdRows gives *sql.Rows the Close of Rows; the error Close returns is
// the one Err reports.
type stdRows struct{ *sql.Rows }

func (r stdRows) Close() { _ = r.Rows.Close() }

// StdRows returns the *sql.Rows behind rows from StdDB or StdTx, nil for
// others. Scanning through it spares the allocation of the arguments a
// call through the Rows interface costs.
func StdRows(rows Rows) *sql.Rows {
	if r, ok := rows.(stdRows); ok {
		return r.Rows
	}
	return nil
}
