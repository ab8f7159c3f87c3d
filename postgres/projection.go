package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/internal/sqlstore/pgxexec"
	"github.com/factum-go/factum/projection"
	"github.com/jackc/pgx/v5"
)

// ProjectionStore is the read-model database of projections in a
// PostgreSQL database: their checkpoints live in the context's checkpoint
// table (the one NewCheckpointStore uses), written in the same transaction
// as the read model.
type ProjectionStore struct {
	db      *DB
	context string
	cps     *sqlstore.Checkpoints
}

var _ projection.Store = (*ProjectionStore)(nil)

// NewProjectionStore returns the projection store of boundedContext in db,
// applying the checkpoint table's migrations if they are not applied yet.
func NewProjectionStore(ctx context.Context, db *DB, boundedContext string) (*ProjectionStore, error) {
	table, err := checkpointTable(ctx, db, boundedContext)
	if err != nil {
		return nil, err
	}
	return &ProjectionStore{db: db, context: boundedContext,
		cps: sqlstore.NewCheckpoints(&dialect, table, nil, nil)}, nil
}

// Begin implements projection.Store: a READ COMMITTED transaction from the
// pool. Its Checkpoint locks the group's row (made first, at position
// zero, if there is none) until the transaction ends, so runners of one
// projection take turns: the second reads the checkpoint the first
// committed.
func (s *ProjectionStore) Begin(ctx context.Context) (projection.Txn, error) {
	tx, err := s.db.Pool().Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: projection store %s: %w", s.context, err)
	}
	return sqlstore.NewProjectionTx(s.cps, pgxexec.New(tx), tx, true, func(ctx context.Context, commit bool) error {
		if commit {
			return tx.Commit(ctx)
		}
		if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
			return err
		}
		return nil
	}), nil
}

// PgxTx returns the pgx.Tx behind a projection's transaction on
// PostgreSQL, for pgx's API beyond Exec and QueryRow (CopyFrom, batches).
func PgxTx(tx projection.Tx) (pgx.Tx, bool) {
	p, ok := tx.(*sqlstore.ProjectionTx)
	if !ok {
		return nil, false
	}
	raw, ok := p.Raw.(pgx.Tx)
	return raw, ok
}
