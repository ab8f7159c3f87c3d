package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/factum-go/factum/internal/sqlstore"
)

// CheckpointStore is the SQLite event.CheckpointStore of the consumer groups
// reading one bounded context's log. Positions live in the table
// factum_<context>_checkpoints, one row per group keyed by the group's
// factum.Function (context, processor, name).
//
// A save is one upsert, INSERT … ON CONFLICT DO UPDATE … WHERE the stored
// (tx, seq) is below the new one, so the database itself keeps a
// checkpoint from moving backwards, whatever the order concurrent saves
// reach it in. Saves run on the database's single write connection, and
// concurrent ones are committed together in one transaction, with the
// other writes of the database queued beside them (appends, snapshot
// saves), each still its own statement, as if run one after another, so
// that they share one fsync.
//
// Cancellation: a save whose context ends before its transaction starts is
// never written; once it has started, the call waits for the outcome, so
// an error always means "not written".
//
// It is also the event.LeaseStore of those groups (Acquire, Renew,
// Release, SaveFencedCheckpoint), their leases in the table
// factum_<context>_leases: each call is a write transaction of its own,
// which judges expiry by the store's clock read once it holds SQLite's
// write lock, and a fenced save checks the lease and saves the position in
// that one transaction.
//
// A CheckpointStore is safe for concurrent use.
type CheckpointStore struct {
	checkpointStore // the shared implementation
	leases          // the shared lease methods, over the store's leaseStmts
	db              *DB
	context         string
	upsert          *sql.Stmt // prepared on the write connection, owned by db
	now             func() time.Time
}

// NewCheckpointStore returns the checkpoint store of the consumers of
// boundedContext's log in db, applying its schema migrations (component
// "checkpoint:<context>", table factum_<context>_checkpoints) if they are
// not applied yet.
func NewCheckpointStore(ctx context.Context, db *DB, boundedContext string) (*CheckpointStore, error) {
	core, err := sqlstore.NewCheckpoints(ctx, &dialect, db.migrator(), migrations, boundedContext, db.reads(), db.writes())
	if err != nil {
		return nil, err
	}
	// Prepared on the DB's write connection for every transaction there,
	// the snapshot saves' that carry a checkpoint included.
	upsert, err := db.writeStmts.Prepare(ctx, core.Upsert)
	if err != nil {
		return nil, fmt.Errorf("sqlite: checkpoint store %s: prepare save: %w", boundedContext, err)
	}
	s := &CheckpointStore{checkpointStore: core, db: db, context: boundedContext, upsert: upsert, now: time.Now}
	s.leases = sqlstore.NewLeases(&dialect, (*leaseStmts)(s))
	return s, nil
}

// Context returns the bounded context whose consumers the store serves.
func (s *CheckpointStore) Context() string { return s.context }

// Close does nothing: the store's prepared statement belongs to its DB,
// which closes it. It is there for owners that close what they make.
func (s *CheckpointStore) Close() error { return nil }
