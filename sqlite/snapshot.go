package sqlite

import (
	"context"
	"fmt"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/snapshot"
)

// SnapshotStore is the SQLite snapshot.QueryStore of one bounded context.
// Snapshots live in the table factum_<context>_snapshots, one row per
// aggregate with the columns of sqlquery.SnapshotSchema (the state as JSON
// text) and the aggregate type; the primary key is (aggregate type,
// aggregate ID).
//
// # Saves
//
// A save is one statement: INSERT … ON CONFLICT (aggregate, aggregate_id)
// DO UPDATE … WHERE the stored version is not above the new one and the
// stored tenant is the new one. So the database itself keeps a lower
// version from overwriting a higher one, lets an equal version repair, and
// never moves a snapshot to another tenant. A save that changes no row is
// then classified in the same transaction, still holding the write lock, by
// reading the stored tenant: another tenant is a TenantMismatch error, the
// same tenant a stale version (Save reports false). Saves run on the
// database's single write connection; concurrent ones are committed
// together in one transaction, with the other writes of the database
// queued beside them (appends, checkpoints), each its own statements, as
// if run one after another, so that they share one fsync. A save whose context ends before
// its transaction starts is never written; once it has started, the call
// waits for the outcome, so an error always means "not saved".
//
// # Queries
//
// Find and Count translate query plans with package sqlquery (SQLite's JSON
// functions, bound parameters only) over the table, scoped to one
// aggregate type; they read through the database's reader pool, which sees
// every committed save at once. Results are those of the in-memory
// evaluator, order included: the store runs the whole snapshottest corpus.
//
// # Indexes for hot query fields
//
// The primary key serves lookups by aggregate ID and the default order.
// Any other condition reads every snapshot of the aggregate type. For a
// state field that queries often filter on, add an index on the aggregate
// type and the expression the translator writes for the field, which
// extracts it only when it has the compared JSON type. For equality and
// ranges on a string field state.status of the context shop:
//
//	CREATE INDEX factum_shop_snapshots_status ON factum_shop_snapshots (aggregate,
//	  (CASE WHEN json_type(state, '$."status"') = 'text' THEN json_extract(state, '$."status"') END));
//
// for a number field state.total:
//
//	CREATE INDEX factum_shop_snapshots_total ON factum_shop_snapshots (aggregate,
//	  (CASE WHEN json_type(state, '$."total"') IN ('integer', 'real') THEN json_extract(state, '$."total"') END));
//
// and for lists sorted by a snapshot column, newest first, an index in the
// sort's order, which spares the sort:
//
//	CREATE INDEX factum_shop_snapshots_event_time ON factum_shop_snapshots (aggregate, event_time DESC, aggregate_id);
//
// SQLite uses an expression index only when the query holds the same
// expression, so keep these forms (the statements sqlquery writes, see its
// Example, show them for other paths). The index serves comparisons that
// are not under a negation (NE, NOT_IN, NOR); those read every row. Each
// index costs every save a little: add them for fields queried often over
// many snapshots, and check with EXPLAIN QUERY PLAN. (The package tests create exactly
// these indexes and check that the plans use them.) Quote the table name
// in the statements when the context name holds '-' or '.'.
//
// # Batches
//
// SaveBatch saves many snapshots in one transaction, each as Save would;
// SaveBatchAt also saves a consumer's checkpoint there when the checkpoint
// store is a CheckpointStore of the same DB. They are the snapshotter's
// fast path for the snapshots of one consumer batch.
//
// A SnapshotStore is safe for concurrent use.
type SnapshotStore struct {
	*snapshot.BatchFront // the checks, over the shared backend
	core                 *sqlstore.Snapshots
}

// NewSnapshotStore returns the snapshot store of boundedContext in db,
// applying its schema migrations (component "snapshot:<context>", table
// factum_<context>_snapshots) if they are not applied yet.
func NewSnapshotStore(ctx context.Context, db *DB, boundedContext string) (*SnapshotStore, error) {
	core, err := sqlstore.NewSnapshots(ctx, &dialect, db.migrator(), migrations, boundedContext, db.reads(), db.writes(),
		sqlstore.CheckpointsOf(func(c *CheckpointStore) event.CheckpointStore { return c.checkpointStore }))
	if err != nil {
		return nil, err
	}
	// Prepared once on the single write connection, so that a save does
	// not parse its statements again.
	if err := db.prepareWrites(ctx, core.UpsertSQL, core.TenantSQL); err != nil {
		return nil, fmt.Errorf("sqlite: snapshot store %s: prepare save: %w", boundedContext, err)
	}
	return &SnapshotStore{BatchFront: core.Front, core: core}, nil
}

// Context returns the bounded context the store serves.
func (s *SnapshotStore) Context() string { return s.core.Context() }

// Close does nothing: the store's prepared statements belong to its DB,
// which closes them. It is there for owners that close what they make.
func (s *SnapshotStore) Close() error { return nil }
