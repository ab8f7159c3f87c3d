package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
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
	upsert  string
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
		load:    checkpointLoadSQL(table),
		del:     `DELETE FROM ` + table + ` WHERE context = ?1 AND processor = ?2 AND name = ?3`,
	}, nil
}

// Begin implements projection.Store: an immediate transaction on the write
// connection.
func (s *ProjectionStore) Begin(ctx context.Context) (projection.Txn, error) {
	tx, err := s.db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: projection store %s: %w", s.context, err)
	}
	return &projectionTx{s: s, tx: tx}, nil
}

// SQLTx returns the *sql.Tx behind a projection's transaction on SQLite,
// for the database/sql API beyond Exec and QueryRow.
func SQLTx(tx projection.Tx) (*sql.Tx, bool) {
	p, ok := tx.(*projectionTx)
	if !ok {
		return nil, false
	}
	return p.tx, true
}

type projectionTx struct {
	s  *ProjectionStore
	tx *sql.Tx
}

func (t *projectionTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t *projectionTx) QueryRow(ctx context.Context, query string, args ...any) projection.Row {
	return t.tx.QueryRowContext(ctx, query, args...)
}

func (t *projectionTx) Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error) {
	if err := event.ValidateGroup(group); err != nil {
		return factum.Position{}, err
	}
	var tx, seq int64
	err := t.tx.QueryRowContext(ctx, t.s.load, group.Context, group.Processor, group.Name).Scan(&tx, &seq)
	switch {
	case err == sql.ErrNoRows:
		return factum.Position{}, nil
	case err != nil:
		return factum.Position{}, fmt.Errorf("sqlite: checkpoint of %s: %w", group, err)
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
	if _, err := t.tx.ExecContext(ctx, t.s.upsert, group.Context, group.Processor, group.Name, int64(pos.Tx), int64(pos.Seq), time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("sqlite: save checkpoint of %s at %s: %w", group, pos, err)
	}
	return nil
}

func (t *projectionTx) DeleteCheckpoint(ctx context.Context, group factum.Function) error {
	if _, err := t.tx.ExecContext(ctx, t.s.del, group.Context, group.Processor, group.Name); err != nil {
		return fmt.Errorf("sqlite: delete checkpoint of %s: %w", group, err)
	}
	return nil
}

func (t *projectionTx) Commit(context.Context) error { return t.tx.Commit() }

func (t *projectionTx) Rollback(context.Context) error {
	if err := t.tx.Rollback(); err != nil && err != sql.ErrTxDone {
		return err
	}
	return nil
}
