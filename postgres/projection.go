package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
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
	upsert  string
	ensure  string
	load    string
	del     string
}

var _ projection.Store = (*ProjectionStore)(nil)

// NewProjectionStore returns the projection store of boundedContext in db,
// applying the checkpoint table's migrations if they are not applied yet.
func NewProjectionStore(ctx context.Context, db *DB, boundedContext string) (*ProjectionStore, error) {
	table, err := checkpointTable(ctx, db, boundedContext)
	if err != nil {
		return nil, err
	}
	return &ProjectionStore{
		db:      db,
		context: boundedContext,
		upsert:  checkpointUpsertSQL(table),
		ensure:  `INSERT INTO ` + table + ` (context, processor, name, tx, seq) VALUES ($1, $2, $3, 0, 0) ON CONFLICT DO NOTHING`,
		load:    checkpointLoadSQL(table) + ` FOR UPDATE`,
		del:     `DELETE FROM ` + table + ` WHERE context = $1 AND processor = $2 AND name = $3`,
	}, nil
}

// Begin implements projection.Store: a READ COMMITTED transaction from the
// pool.
func (s *ProjectionStore) Begin(ctx context.Context) (projection.Txn, error) {
	tx, err := s.db.Pool().Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: projection store %s: %w", s.context, err)
	}
	return &projectionTx{s: s, tx: tx}, nil
}

// PgxTx returns the pgx.Tx behind a projection's transaction on
// PostgreSQL, for pgx's API beyond Exec and QueryRow (CopyFrom, batches).
func PgxTx(tx projection.Tx) (pgx.Tx, bool) {
	p, ok := tx.(*projectionTx)
	if !ok {
		return nil, false
	}
	return p.tx, true
}

type projectionTx struct {
	s  *ProjectionStore
	tx pgx.Tx
}

func (t *projectionTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (t *projectionTx) QueryRow(ctx context.Context, query string, args ...any) projection.Row {
	return t.tx.QueryRow(ctx, query, args...)
}

func (t *projectionTx) Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error) {
	if err := event.ValidateGroup(group); err != nil {
		return factum.Position{}, err
	}
	// The group's row is locked until the transaction ends (made first,
	// at position zero, if there is none), so runners of one projection
	// take turns: the second reads the checkpoint the first committed.
	if _, err := t.tx.Exec(ctx, t.s.ensure, group.Context, group.Processor, group.Name); err != nil {
		return factum.Position{}, fmt.Errorf("postgres: checkpoint of %s: %w", group, err)
	}
	var tx, seq int64
	err := t.tx.QueryRow(ctx, t.s.load, group.Context, group.Processor, group.Name).Scan(&tx, &seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return factum.Position{}, nil
	case err != nil:
		return factum.Position{}, fmt.Errorf("postgres: checkpoint of %s: %w", group, err)
	}
	return factum.Position{Tx: uint64(tx), Seq: uint64(seq)}, nil
}

func (t *projectionTx) SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error {
	if err := event.ValidateGroup(group); err != nil {
		return err
	}
	if err := event.ValidatePosition(pos); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, t.s.upsert, group.Context, group.Processor, group.Name, int64(pos.Tx), int64(pos.Seq)); err != nil {
		return fmt.Errorf("postgres: save checkpoint of %s at %s: %w", group, pos, err)
	}
	return nil
}

func (t *projectionTx) DeleteCheckpoint(ctx context.Context, group factum.Function) error {
	if _, err := t.tx.Exec(ctx, t.s.del, group.Context, group.Processor, group.Name); err != nil {
		return fmt.Errorf("postgres: delete checkpoint of %s: %w", group, err)
	}
	return nil
}

func (t *projectionTx) Commit(ctx context.Context) error { return t.tx.Commit(ctx) }

func (t *projectionTx) Rollback(ctx context.Context) error {
	if err := t.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return err
	}
	return nil
}
