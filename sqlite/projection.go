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
// the read model. A projection's transaction holds the write connection
// for its whole batch, so appends to the same database wait for it: keep
// batches short. Begin starts an immediate transaction on the write
// connection.
type ProjectionStore = sqlstore.Projections

// NewProjectionStore returns the projection store of boundedContext in db,
// applying the checkpoint table's migrations if they are not applied yet.
func NewProjectionStore(ctx context.Context, db *DB, boundedContext string) (*ProjectionStore, error) {
	cps, err := sqlstore.NewCheckpoints(ctx, &dialect, db.migrator(), migrations, boundedContext, nil, nil)
	if err != nil {
		return nil, err
	}
	return sqlstore.NewProjections(cps, boundedContext, false, func(ctx context.Context) (sqlstore.Executor, any, func(context.Context, bool) error, error) {
		tx, err := db.Writer().BeginTx(ctx, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		return sqlstore.StdTx(tx, nil), tx, func(_ context.Context, commit bool) error {
			if commit {
				return tx.Commit()
			}
			if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
				return err
			}
			return nil
		}, nil
	}), nil
}

// SQLTx returns the *sql.Tx behind a projection's transaction on SQLite,
// for the database/sql API beyond Exec and QueryRow.
func SQLTx(tx projection.Tx) (*sql.Tx, bool) { return sqlstore.Raw[*sql.Tx](tx) }
