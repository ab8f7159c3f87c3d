package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/projection"
)

// ProjectionStore is the read-model database of projections in a SQLite
// database: their transactions run on the database's one write
// connection, and their checkpoints live in the context's checkpoint table
// (the one NewCheckpointStore uses), written in the same transaction as
// the read model. A projection's transaction holds the write connection
// for its whole batch, so appends to the same database wait for it: keep
// batches short.
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

// Begin implements projection.Store: an immediate transaction on the write
// connection.
func (s *ProjectionStore) Begin(ctx context.Context) (projection.Txn, error) {
	tx, err := s.db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: projection store %s: %w", s.context, err)
	}
	return sqlstore.NewProjectionTx(s.cps, sqlstore.StdTx(tx, nil), tx, false, func(_ context.Context, commit bool) error {
		if commit {
			return tx.Commit()
		}
		if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
			return err
		}
		return nil
	}), nil
}

// SQLTx returns the *sql.Tx behind a projection's transaction on SQLite,
// for the database/sql API beyond Exec and QueryRow.
func SQLTx(tx projection.Tx) (*sql.Tx, bool) {
	p, ok := tx.(*sqlstore.ProjectionTx)
	if !ok {
		return nil, false
	}
	raw, ok := p.Raw.(*sql.Tx)
	return raw, ok
}
