package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/jackc/pgx/v5"
)

//go:embed migrations/checkpoint/*.sql
var checkpointMigrations embed.FS

// CheckpointStore is the PostgreSQL event.CheckpointStore of the consumer
// groups reading one bounded context's log. Positions live in the table
// factum_<context>_checkpoints, one row per group keyed by the group's
// factum.Function (context, processor, name).
//
// A save is one statement, INSERT … ON CONFLICT DO UPDATE … WHERE the
// stored (tx, seq) is below the new one: the row lock the upsert takes
// orders concurrent saves of one group, and each compares against the row
// as the previous one left it, so a checkpoint never moves backwards.
// Position.Tx is the event store's transaction ID (see EventStore), kept
// as a bigint.
//
// A CheckpointStore is safe for concurrent use.
type CheckpointStore struct {
	db      *DB
	context string
	upsert  string
	load    string
}

var _ event.CheckpointStore = (*CheckpointStore)(nil)

// NewCheckpointStore returns the checkpoint store of the consumers of
// boundedContext's log in db, applying its schema migrations (component
// "checkpoint:<context>", table factum_<context>_checkpoints) if they are
// not applied yet. Context names longer than 44 bytes are refused, as
// PostgreSQL would truncate the table names.
func NewCheckpointStore(ctx context.Context, db *DB, boundedContext string) (*CheckpointStore, error) {
	table, err := checkpointTable(ctx, db, boundedContext)
	if err != nil {
		return nil, err
	}
	return &CheckpointStore{
		db:      db,
		context: boundedContext,
		upsert:  checkpointUpsertSQL(table),
		load:    checkpointLoadSQL(table),
	}, nil
}

// checkpointUpsertSQL saves a group's position ($1–$3 the group, $4/$5 the
// position) unless the stored one is at or after it: the row lock of the
// upsert orders concurrent saves, and the row-value comparison keeps the
// position from moving backwards.
func checkpointUpsertSQL(table string) string {
	return `INSERT INTO ` + table + ` AS c (context, processor, name, tx, seq) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (context, processor, name) DO UPDATE SET tx = EXCLUDED.tx, seq = EXCLUDED.seq, updated_at = now()
			WHERE (c.tx, c.seq) < (EXCLUDED.tx, EXCLUDED.seq)`
}

// checkpointLoadSQL reads a group's position ($1–$3 the group).
func checkpointLoadSQL(table string) string {
	return `SELECT tx, seq FROM ` + table + ` WHERE context = $1 AND processor = $2 AND name = $3`
}

// checkpointTable checks db and the context name, applies the checkpoint
// component's migrations (the checkpoint and lease tables) if they are not
// applied yet, and returns the quoted checkpoint table: the set-up of every
// store over those tables.
func checkpointTable(ctx context.Context, db *DB, boundedContext string) (string, error) {
	if db == nil {
		return "", factum.IllegalArgument("postgres: nil DB")
	}
	if err := validTableContext(boundedContext); err != nil {
		return "", err
	}
	prefix := "factum_" + boundedContext + "_"
	if err := db.Migrate(ctx, checkpointMigrations, "migrations/checkpoint", "checkpoint:"+boundedContext, prefix); err != nil {
		return "", err
	}
	return `"` + prefix + `checkpoints"`, nil
}

// validTableContext checks a context name for the tables named after it:
// factum_<context>_checkpoints must fit PostgreSQL's 63-byte identifiers,
// which the server would otherwise truncate silently. The bound is the
// event store's (esMaxContextLen), so a context serves all components.
func validTableContext(boundedContext string) error {
	if err := factum.ValidateName("context", boundedContext); err != nil {
		return err
	}
	if len(boundedContext) > esMaxContextLen {
		return factum.IllegalArgument(fmt.Sprintf("postgres: context name %q is longer than %d bytes, too long for table names", boundedContext, esMaxContextLen))
	}
	return nil
}

// Context returns the bounded context whose consumers the store serves.
func (s *CheckpointStore) Context() string { return s.context }

// Checkpoint implements event.CheckpointStore: the group's saved position,
// or the zero Position when none was saved.
func (s *CheckpointStore) Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error) {
	if err := event.ValidateGroup(group); err != nil {
		return factum.Position{}, err
	}
	var tx, seq int64
	err := s.db.Pool().QueryRow(ctx, s.load, group.Context, group.Processor, group.Name).Scan(&tx, &seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return factum.Position{}, nil
	case err != nil:
		return factum.Position{}, fmt.Errorf("postgres: checkpoint of %s: %w", group, err)
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
	if _, err := s.db.Pool().Exec(ctx, s.upsert, group.Context, group.Processor, group.Name, int64(pos.Tx), int64(pos.Seq)); err != nil {
		return fmt.Errorf("postgres: save checkpoint of %s at %s: %w", group, pos, err)
	}
	return nil
}
