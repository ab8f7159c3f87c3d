package postgres

import (
	"context"
	"errors"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/internal/sqlstore/pgxexec"
	"github.com/factum-go/factum/projection"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ProjectionStore is the read-model database of projections in a
// PostgreSQL database: their checkpoints live in the context's checkpoint
// table (the one NewCheckpointStore uses), written in the same transaction
// as the read model, as are the projections' build state
// (factum_<context>_projections) and failure marks
// (factum_<context>_projection_marks). Begin starts a READ COMMITTED
// transaction from the pool; its Checkpoint and State lock their rows
// (made first if there are none) until the transaction ends, so runners
// of one projection take turns: the second reads what the first
// committed. Queries and State read from the pool outside a transaction.
type ProjectionStore = sqlstore.Projections

// NewProjectionStore returns the projection store of boundedContext in db,
// applying the checkpoint and projection tables' migrations if they are
// not applied yet.
func NewProjectionStore(ctx context.Context, db *DB, boundedContext string) (*ProjectionStore, error) {
	return sqlstore.OpenProjections(ctx, &dialect, db.migrator(), migrations, boundedContext, sqlstore.ProjectionsConfig{
		Lock: true, Reader: pgxexec.New(db.Pool()),
		Begin: func(ctx context.Context) (sqlstore.Executor, any, func(context.Context, bool) error, error) {
			tx, err := db.Pool().Begin(ctx)
			if err != nil {
				return nil, nil, nil, err
			}
			return batchExec{pgxexec.New(tx), tx}, tx, func(ctx context.Context, commit bool) error {
				if commit {
					return tx.Commit(ctx)
				}
				if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
					return err
				}
				return nil
			}, nil
		},
		Read: func(ctx context.Context, limit int, query string, args ...any) (projection.Result, error) {
			rows, err := db.Pool().Query(ctx, query, args...)
			if err != nil {
				return projection.Result{}, err
			}
			defer rows.Close()
			fields := rows.FieldDescriptions()
			cols := make([]string, len(fields))
			for i, f := range fields {
				cols[i] = f.Name
			}
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
		},
	})
}

// PgxTx returns the pgx.Tx behind a projection's transaction on
// PostgreSQL, for pgx's API beyond Exec, QueryRow and Queue (CopyFrom).
// Statements queued with Queue and not run yet run at the transaction's
// next Exec, QueryRow or commit, after what is done directly on the
// pgx.Tx meanwhile.
func PgxTx(tx projection.Tx) (pgx.Tx, bool) { return sqlstore.Raw[pgx.Tx](tx) }

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
