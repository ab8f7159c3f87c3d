package postgres

import (
	"context"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/factum-go/factum/snapshot"
)

// SnapshotStore is the PostgreSQL snapshot.QueryStore of one bounded
// context. Snapshots live in the table factum_<context>_snapshots, one row
// per aggregate with the columns of sqlquery.SnapshotSchema (the state as
// jsonb) and the aggregate type; the primary key is (aggregate type,
// aggregate ID). States are kept as jsonb, so they come back equal in
// value but not byte for byte (key order and spacing are jsonb's).
//
// # Saves
//
// A save is one statement: INSERT … ON CONFLICT (aggregate, aggregate_id)
// DO UPDATE … WHERE the stored version is not above the new one and the
// stored tenant is the new one. The upsert locks the row, so concurrent
// saves of one aggregate run one after another, each judged against the
// row the previous one left: a lower version never overwrites a higher
// one, an equal version repairs, and no save moves a snapshot to another
// tenant. When the statement changes no row, the stored tenant is read to
// say why: another tenant is a TenantMismatch error, the same tenant a
// stale version (Save reports false). A row's tenant never changes once
// written, so that read cannot be misled by a save in between. Text
// PostgreSQL cannot hold (invalid UTF-8, NUL bytes, a \u0000 escape in
// jsonb) is refused as IllegalArgument.
//
// # Queries
//
// Find and Count translate query plans with package sqlquery (jsonb,
// bound parameters only) over the table, scoped to one aggregate type.
// Results are those of the in-memory evaluator, order included: the store
// runs the whole snapshottest corpus.
//
// # Indexes for hot query fields
//
// The primary key serves lookups by aggregate ID and the default order.
// Any other condition reads every snapshot of the aggregate type. For a
// state field that queries often filter on, add an index on the aggregate
// type and the expression the translator writes for the field, which
// extracts it only when it has the compared JSON type. For equality on a
// string field state.status of the context shop:
//
//	CREATE INDEX factum_shop_snapshots_status ON factum_shop_snapshots (aggregate,
//	  (CASE WHEN jsonb_typeof(state -> 'status') = 'string' THEN state -> 'status' #>> '{}' END));
//
// for ranges on it (strings compare in byte order, so the expression is
// declared COLLATE "C"; such an index does not serve equality):
//
//	CREATE INDEX factum_shop_snapshots_status_c ON factum_shop_snapshots (aggregate,
//	  (CASE WHEN jsonb_typeof(state -> 'status') = 'string' THEN state -> 'status' #>> '{}' END) COLLATE "C");
//
// for a number field state.total:
//
//	CREATE INDEX factum_shop_snapshots_total ON factum_shop_snapshots (aggregate,
//	  (CASE WHEN jsonb_typeof(state -> 'total') = 'number' THEN (state -> 'total')::float8 END));
//
// and for lists sorted by a snapshot column, newest first, an index in the
// sort's order, which spares the sort:
//
//	CREATE INDEX factum_shop_snapshots_event_time ON factum_shop_snapshots (aggregate, event_time DESC, aggregate_id);
//
// PostgreSQL uses an expression index only when the query holds the same
// expression (and collation), so keep these forms (the statements sqlquery writes, see its
// Example, show them for other paths). The index serves comparisons that
// are not under a negation (NE, NOT_IN, NOR); those read every row. Each
// index costs every save a little: add them for fields queried often over
// many snapshots, and check with EXPLAIN. (The package tests create exactly
// these indexes and check that the plans use them.) Quote the table name
// in the statements when the context name holds '-' or '.' or capitals.
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
	table                string // quoted identifier
}

// NewSnapshotStore returns the snapshot store of boundedContext in db,
// applying its schema migrations (component "snapshot:<context>", table
// factum_<context>_snapshots) if they are not applied yet. Context names
// longer than 44 bytes are refused, as PostgreSQL would truncate the table
// names.
func NewSnapshotStore(ctx context.Context, db *DB, boundedContext string) (*SnapshotStore, error) {
	ex := db.executor()
	core, err := sqlstore.NewSnapshots(ctx, &dialect, db.migrator(), migrations, boundedContext, ex, nil,
		sqlstore.CheckpointsOf(func(c *CheckpointStore) event.CheckpointStore { return c.checkpointStore }))
	if err != nil {
		return nil, err
	}
	return &SnapshotStore{BatchFront: core.Front, core: core, table: core.Table()}, nil
}

// Context returns the bounded context the store serves.
func (s *SnapshotStore) Context() string { return s.core.Context() }
