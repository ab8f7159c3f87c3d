package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/projection"
)

// ProjectionStore is the read-model database of projections in a SQLite
// database: their transactions run on the database's one write
// connection, and their checkpoints live in the context's checkpoint table
// (the one NewCheckpointStore uses), written in the same transaction as
// the read model, as are the projections' build state
// (factum_<context>_projections) and failure marks
// (factum_<context>_projection_marks). A projection's transaction holds
// the write connection for its whole batch, so appends to the same
// database wait for it: keep batches short. Begin starts an immediate
// transaction on the write connection; queries and State read through the
// database's readers.
type ProjectionStore = sqlstore.Projections

// NewProjectionStore returns the projection store of boundedContext in db,
// applying the checkpoint and projection tables' migrations if they are
// not applied yet.
func NewProjectionStore(ctx context.Context, db *DB, boundedContext string) (*ProjectionStore, error) {
	return sqlstore.OpenProjections(ctx, &dialect, db.migrator(), migrations, boundedContext, sqlstore.ProjectionsConfig{
		Reader: db.reads(),
		Begin: func(ctx context.Context) (sqlstore.Executor, any, func(context.Context, bool) error, error) {
			tx, err := db.Writer().BeginTx(ctx, nil)
			if err != nil {
				return nil, nil, nil, err
			}
			return sqlstore.StdTxCached(tx, db.writeStmts), tx, func(_ context.Context, commit bool) error {
				if commit {
					return tx.Commit()
				}
				if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
					return err
				}
				return nil
			}, nil
		},
		Read: func(ctx context.Context, limit int, query string, args ...any) (projection.Result, error) {
			rows, err := db.Reader().QueryContext(ctx, query, args...)
			if err != nil {
				return projection.Result{}, err
			}
			defer rows.Close()
			cols, err := rows.Columns()
			if err != nil {
				return projection.Result{}, err
			}
			res := projection.Result{Columns: cols, Rows: []map[string]any{}}
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for rows.Next() {
				if len(res.Rows) == limit {
					res.Truncated = true
					break
				}
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					return projection.Result{}, err
				}
				row := make(map[string]any, len(cols))
				for i, c := range cols {
					row[c] = vals[i]
				}
				res.Rows = append(res.Rows, row)
			}
			return res, rows.Err()
		},
	})
}

// SQLTx returns the *sql.Tx behind a projection's transaction on SQLite,
// for the database/sql API beyond Exec, QueryRow and Queue. Statements
// queued with Queue and not run yet run at the transaction's next Exec,
// QueryRow or commit, after what is done directly on the *sql.Tx
// meanwhile.
func SQLTx(tx projection.Tx) (*sql.Tx, bool) { return sqlstore.Raw[*sql.Tx](tx) }
