package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

//go:embed migrations/checkpoint/*.sql
var checkpointMigrations embed.FS

// CheckpointStore is the SQLite event.CheckpointStore of the consumer groups
// reading one bounded context's log. Positions live in the table
// factum_<context>_checkpoints, one row per group keyed by the group's
// factum.Function (context, processor, name).
//
// A save is one upsert, INSERT … ON CONFLICT DO UPDATE … WHERE the stored
// (tx, seq) is below the new one, so the database itself keeps a
// checkpoint from moving backwards, whatever the order concurrent saves
// reach it in. Saves run on the database's single write connection, and
// concurrent ones are committed together in one transaction (each still
// its own statement, as if run one after another), so that they share one
// fsync.
//
// Cancellation: a save whose context ends before its transaction starts is
// never written; once it has started, the call waits for the outcome, so
// an error always means "not written".
//
// A CheckpointStore is safe for concurrent use.
type CheckpointStore struct {
	db      *DB
	context string
	upsert  *sql.Stmt // prepared on the write connection
	load    string
	now     func() time.Time
	batcher prepareBatcher
}

var _ event.CheckpointStore = (*CheckpointStore)(nil)

// NewCheckpointStore returns the checkpoint store of the consumers of
// boundedContext's log in db, applying its schema migrations (component
// "checkpoint:<context>", table factum_<context>_checkpoints) if they are
// not applied yet.
func NewCheckpointStore(ctx context.Context, db *DB, boundedContext string) (*CheckpointStore, error) {
	table, err := checkpointTable(ctx, db, boundedContext)
	if err != nil {
		return nil, err
	}
	upsert, err := db.Writer().PrepareContext(ctx, checkpointUpsertSQL(table))
	if err != nil {
		return nil, fmt.Errorf("sqlite: checkpoint store %s: prepare save: %w", boundedContext, err)
	}
	return &CheckpointStore{
		db:      db,
		context: boundedContext,
		upsert:  upsert,
		load:    checkpointLoadSQL(table),
		now:     time.Now,
		batcher: prepareBatcher{db: db},
	}, nil
}

// Context returns the bounded context whose consumers the store serves.
func (s *CheckpointStore) Context() string { return s.context }

// Close releases the store's prepared statement. It does not close the
// DB. A store used after Close still works, preparing its statement on
// every save.
func (s *CheckpointStore) Close() error { return s.upsert.Close() }

// Checkpoint implements event.CheckpointStore: the group's saved position,
// or the zero Position when none was saved.
func (s *CheckpointStore) Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error) {
	if err := event.ValidateGroup(group); err != nil {
		return factum.Position{}, err
	}
	var tx, seq int64
	err := s.db.Reader().QueryRowContext(ctx, s.load, group.Context, group.Processor, group.Name).Scan(&tx, &seq)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return factum.Position{}, nil
	case err != nil:
		return factum.Position{}, fmt.Errorf("sqlite: checkpoint of %s: %w", group, err)
	}
	return factum.Position{Tx: uint64(tx), Seq: uint64(seq)}, nil
}

// SaveCheckpoint implements event.CheckpointStore: it records pos unless
// the group's saved position is at or after it.
func (s *CheckpointStore) SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error {
	if err := event.ValidateGroup(group); err != nil {
		return err
	}
	if err := event.ValidatePosition(pos); err != nil {
		return err
	}
	now := s.now().UnixMilli()
	err := s.batcher.do(&prepareWrite{ctx: ctx, apply: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, s.upsert).ExecContext(ctx, group.Context, group.Processor, group.Name, int64(pos.Tx), int64(pos.Seq), now)
		return err
	}})
	if err != nil {
		return fmt.Errorf("sqlite: save checkpoint of %s at %s: %w", group, pos, err)
	}
	return nil
}

// checkpointUpsertSQL saves a group's position (?1–?3 the group, ?4/?5 the
// position, ?6 the time) unless the stored one is at or after it: the
// row-value comparison keeps the position from moving backwards.
func checkpointUpsertSQL(table string) string {
	return `INSERT INTO ` + table + ` (context, processor, name, tx, seq, updated_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6)
		ON CONFLICT (context, processor, name) DO UPDATE SET tx = excluded.tx, seq = excluded.seq, updated_at = excluded.updated_at
		WHERE (` + table + `.tx, ` + table + `.seq) < (excluded.tx, excluded.seq)`
}

// checkpointLoadSQL reads a group's position (?1–?3 the group).
func checkpointLoadSQL(table string) string {
	return `SELECT tx, seq FROM ` + table + ` WHERE context = ?1 AND processor = ?2 AND name = ?3`
}

// checkpointTable checks db and the context name, applies the checkpoint
// component's migrations (the checkpoint and lease tables) if they are not
// applied yet, and returns the quoted checkpoint table: the set-up of every
// store over those tables.
func checkpointTable(ctx context.Context, db *DB, boundedContext string) (string, error) {
	if db == nil {
		return "", factum.IllegalArgument("sqlite: nil DB")
	}
	if err := factum.ValidateName("context", boundedContext); err != nil {
		return "", err
	}
	prefix := "factum_" + boundedContext + "_"
	if err := db.Migrate(ctx, checkpointMigrations, "migrations/checkpoint", "checkpoint:"+boundedContext, prefix); err != nil {
		return "", err
	}
	return `"` + prefix + `checkpoints"`, nil
}
