package pgxexec

import (
	"context"
	"errors"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/projection"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Begin returns the BeginFunc of projection transactions on a pgx pool or
// connection: each is a transaction of b, whose executor sends the
// statements a projection queued in one pipeline.
func Begin(b interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}) sqlstore.BeginFunc {
	return func(ctx context.Context) (sqlstore.Executor, any, func(context.Context, bool) error, error) {
		tx, err := b.Begin(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		return batchExec{New(tx), tx}, tx, func(ctx context.Context, commit bool) error {
			if commit {
				return tx.Commit(ctx)
			}
			if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
				return err
			}
			return nil
		}, nil
	}
}

// Read returns the ReadFunc of projection queries on c.
func Read(c Conn) sqlstore.ReadFunc {
	return func(ctx context.Context, limit int, query string, args ...any) (projection.Result, error) {
		rows, err := c.Query(ctx, query, args...)
		if err != nil {
			return projection.Result{}, err
		}
		fields := rows.FieldDescriptions()
		cols := make([]string, len(fields))
		for i, f := range fields {
			cols[i] = f.Name
		}
		return sqlstore.ReadResult(cols, rows, limit)
	}
}

// batchExec is a projection transaction's executor, which sends the
// statements a projection queued in one pipeline.
type batchExec struct {
	sqlstore.Executor
	tx pgx.Tx
}

// ExecBatch implements sqlstore.BatchExecutor with a pgx batch: one round
// trip for all the statements.
func (e batchExec) ExecBatch(ctx context.Context, stmts []sqlstore.Statement) ([]int64, error) {
	b := &pgx.Batch{}
	for _, s := range stmts {
		b.Queue(s.SQL, s.Args...)
	}
	br := e.tx.SendBatch(ctx, b)
	rows := make([]int64, 0, len(stmts))
	for range stmts {
		tag, err := br.Exec()
		if err != nil {
			_ = br.Close()
			return rows, e.refused(stmts, rows, err)
		}
		rows = append(rows, tag.RowsAffected())
	}
	return rows, br.Close()
}

// refused names the statement behind err when pgx refused the batch
// before running any of it: it prepares every new statement, then encodes
// every statement's arguments, first, so the first error of the results
// is the failing statement's, whichever it is.
func (e batchExec) refused(stmts []sqlstore.Statement, rows []int64, err error) error {
	pre, ok := errors.AsType[pgx.ErrPreprocessingBatch](err)
	if !ok || len(rows) > 0 {
		return err
	}
	first := -1
	for i := range stmts {
		if stmts[i].SQL != pre.SQL() {
			continue
		}
		if first < 0 {
			first = i
		}
		if _, server := errors.AsType[*pgconn.PgError](err); server {
			// The server refused to prepare the SQL: it fails wherever
			// it comes first.
			return &sqlstore.BatchError{Index: i, Err: err}
		}
		// The arguments of one of the statements with this SQL cannot be
		// encoded; pgx's message does not say which, so find the first
		// whose arguments do not encode by their Go types.
		var eqb pgx.ExtendedQueryBuilder
		if eqb.Build(e.tx.Conn().TypeMap(), nil, stmts[i].Args) != nil {
			return &sqlstore.BatchError{Index: i, Err: err}
		}
	}
	if first < 0 {
		return err
	}
	return &sqlstore.BatchError{Index: first, Err: err}
}
