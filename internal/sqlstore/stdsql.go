package sqlstore

import (
	"context"
	"database/sql"
)

// StdDB is an Executor over a database/sql pool.
func StdDB(db *sql.DB) Executor { return stdDB{db} }

// StdTx is an Executor over a database/sql transaction. A statement whose
// text is a key of prepared runs as that prepared statement (bound to the
// transaction), so that it is not parsed again.
func StdTx(tx *sql.Tx, prepared map[string]*sql.Stmt) Executor {
	return stdTx{tx: tx, prepared: prepared}
}

// StdDBPrepared is StdDB running a statement whose text is a key of
// prepared as that prepared statement (made on db), so that hot reads are
// not parsed again on every call; database/sql prepares it once on each of
// the pool's connections.
func StdDBPrepared(db *sql.DB, prepared map[string]*sql.Stmt) Executor {
	return stdDBPrepared{stdDB: stdDB{db}, prepared: prepared}
}

// PrepareAll prepares each of queries on db, for StdDBPrepared. On an
// error it closes those it prepared.
func PrepareAll(ctx context.Context, db *sql.DB, queries ...string) (map[string]*sql.Stmt, error) {
	out := make(map[string]*sql.Stmt, len(queries))
	for _, q := range queries {
		if _, ok := out[q]; ok {
			continue
		}
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			CloseAll(out)
			return nil, err
		}
		out[q] = st
	}
	return out, nil
}

// CloseAll closes the statements of PrepareAll.
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

type stdDBPrepared struct {
	stdDB
	prepared map[string]*sql.Stmt
}

func (e stdDBPrepared) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if st, ok := e.prepared[query]; ok {
		return affected(st.ExecContext(ctx, args...))
	}
	return e.stdDB.Exec(ctx, query, args...)
}

func (e stdDBPrepared) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	st, ok := e.prepared[query]
	if !ok {
		return e.stdDB.Query(ctx, query, args...)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return stdRows{rows}, nil
}

func (e stdDBPrepared) QueryRow(ctx context.Context, query string, args ...any) Row {
	if st, ok := e.prepared[query]; ok {
		return st.QueryRowContext(ctx, args...)
	}
	return e.stdDB.QueryRow(ctx, query, args...)
}

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

type stdTx struct {
	tx       *sql.Tx
	prepared map[string]*sql.Stmt
}

func (e stdTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if st, ok := e.prepared[query]; ok {
		return affected(e.tx.StmtContext(ctx, st).ExecContext(ctx, args...))
	}
	return affected(e.tx.ExecContext(ctx, query, args...))
}

func (e stdTx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	var rows *sql.Rows
	var err error
	if st, ok := e.prepared[query]; ok {
		rows, err = e.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	} else {
		rows, err = e.tx.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	return stdRows{rows}, nil
}

func (e stdTx) QueryRow(ctx context.Context, query string, args ...any) Row {
	if st, ok := e.prepared[query]; ok {
		return e.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return e.tx.QueryRowContext(ctx, query, args...)
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
