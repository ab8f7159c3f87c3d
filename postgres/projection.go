package postgres

import (
	"context"
	"errors"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/internal/sqlstore/pgxexec"
	"github.com/factum-go/factum/projection"
	"github.com/jackc/pgx/v5"
)

// ProjectionStore is the read-model database of projections in a
// PostgreSQL database: their checkpoints live in the context's checkpoint
// table (the one NewCheckpointStore uses), written in the same transaction
// as the read model. Begin starts a READ COMMITTED transaction from the
// pool; its Checkpoint locks the group's row (made first, at position
// zero, if there is none) until the transaction ends, so runners of one
// projection take turns: the second reads the checkpoint the first
// committed.
type ProjectionStore = sqlstore.Projections

// NewProjectionStore returns the projection store of boundedContext in db,
// applying the checkpoint table's migrations if they are not applied yet.
func NewProjectionStore(ctx context.Context, db *DB, boundedContext string) (*ProjectionStore, error) {
	cps, err := sqlstore.NewCheckpoints(ctx, &dialect, db.migrator(), migrations, boundedContext, nil, nil)
	if err != nil {
		return nil, err
	}
	return sqlstore.NewProjections(cps, boundedContext, true, func(ctx context.Context) (sqlstore.Executor, any, func(context.Context, bool) error, error) {
		tx, err := db.Pool().Begin(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		return pgxexec.New(tx), tx, func(ctx context.Context, commit bool) error {
			if commit {
				return tx.Commit(ctx)
			}
			if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
				return err
			}
			return nil
		}, nil
	}), nil
}

// PgxTx returns the pgx.Tx behind a projection's transaction on
// PostgreSQL, for pgx's API beyond Exec and QueryRow (CopyFrom, batches).
func PgxTx(tx projection.Tx) (pgx.Tx, bool) { return sqlstore.Raw[pgx.Tx](tx) }
