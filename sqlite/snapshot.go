package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query/sqlquery"
	"github.com/factum-go/factum/snapshot"
)

//go:embed migrations/snapshot/*.sql
var snapshotMigrations embed.FS

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
// together in one transaction (each its own statement, as if run one after
// another), so that they share one fsync. A save whose context ends before
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
// A SnapshotStore is safe for concurrent use.
type SnapshotStore struct {
	db      *DB
	context string
	table   string    // quoted identifier
	upsert  *sql.Stmt // prepared on the write connection
	tenant  *sql.Stmt
	load    string
	tr      *sqlquery.Translator
	batcher prepareBatcher
}

var _ snapshot.QueryStore = (*SnapshotStore)(nil)

// NewSnapshotStore returns the snapshot store of boundedContext in db,
// applying its schema migrations (component "snapshot:<context>", table
// factum_<context>_snapshots) if they are not applied yet.
func NewSnapshotStore(ctx context.Context, db *DB, boundedContext string) (*SnapshotStore, error) {
	if db == nil {
		return nil, factum.IllegalArgument("sqlite: nil DB")
	}
	if err := factum.ValidateName("context", boundedContext); err != nil {
		return nil, err
	}
	prefix := "factum_" + boundedContext + "_"
	if err := db.Migrate(ctx, snapshotMigrations, "migrations/snapshot", "snapshot:"+boundedContext, prefix); err != nil {
		return nil, err
	}
	tr, err := sqlquery.New(sqlquery.SQLite(), sqlquery.SnapshotSchema())
	if err != nil {
		return nil, err
	}
	table := `"` + prefix + `snapshots"`
	s := &SnapshotStore{
		db:      db,
		context: boundedContext,
		table:   table,
		load:    `SELECT ` + snapshotColumns + ` FROM ` + table + ` WHERE aggregate = ?1 AND aggregate_id = ?2`,
		tr:      tr,
		batcher: prepareBatcher{db: db},
	}
	// Prepared once on the single write connection, so that a save does
	// not parse its statement again.
	if s.upsert, err = db.Writer().PrepareContext(ctx, `INSERT INTO `+table+` (aggregate, `+snapshotColumns+`)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
		ON CONFLICT (aggregate, aggregate_id) DO UPDATE SET owner_id = excluded.owner_id, version = excluded.version,
			event_id = excluded.event_id, first_operator = excluded.first_operator, operator = excluded.operator,
			first_event_time = excluded.first_event_time, event_time = excluded.event_time,
			snapshot_time = excluded.snapshot_time, deleted = excluded.deleted, state = excluded.state
		WHERE `+table+`.version <= excluded.version AND `+table+`.tenant_id = excluded.tenant_id`); err != nil {
		return nil, fmt.Errorf("sqlite: snapshot store %s: prepare save: %w", boundedContext, err)
	}
	if s.tenant, err = db.Writer().PrepareContext(ctx, `SELECT tenant_id FROM `+table+` WHERE aggregate = ?1 AND aggregate_id = ?2`); err != nil {
		s.upsert.Close()
		return nil, fmt.Errorf("sqlite: snapshot store %s: prepare save: %w", boundedContext, err)
	}
	return s, nil
}

// snapshotColumns are the columns of sqlquery.SnapshotSchema in the order
// scanSnapshot reads them.
const snapshotColumns = `aggregate_id, tenant_id, owner_id, version, event_id, first_operator, operator,
	first_event_time, event_time, snapshot_time, deleted, state`

// Context returns the bounded context the store serves.
func (s *SnapshotStore) Context() string { return s.context }

// Close releases the store's prepared statements. It does not close the
// DB. A store used after Close still works, preparing its statements on
// every save.
func (s *SnapshotStore) Close() error {
	return errors.Join(s.upsert.Close(), s.tenant.Close())
}

// checkContext refuses aggregates of another bounded context: the table
// holds one context only.
func (s *SnapshotStore) checkContext(named factum.NamedAggregate) error {
	if named.Context != s.context {
		return factum.IllegalArgument(fmt.Sprintf("sqlite: the snapshot store of context %q cannot serve %s", s.context, named))
	}
	return nil
}

// Save implements snapshot.Store.
func (s *SnapshotStore) Save(ctx context.Context, snap snapshot.Snapshot) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := snap.Validate(); err != nil {
		return false, err
	}
	if err := s.checkContext(snap.AggregateID.NamedAggregate); err != nil {
		return false, err
	}
	id := snap.AggregateID
	tenant := id.TenantOrDefault()
	args := []any{id.Aggregate, id.ID, tenant, snap.OwnerID, snap.Version, snap.EventID, snap.FirstOperator, snap.Operator,
		toMillis(snap.FirstEventTime), toMillis(snap.EventTime), toMillis(snap.SnapshotTime), snap.Deleted,
		string(snap.State)} // TEXT, not BLOB: SQLite reads a BLOB as its binary JSONB
	var saved bool
	var stored string
	err := s.batcher.do(&prepareWrite{ctx: ctx, apply: func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.StmtContext(ctx, s.upsert).ExecContext(ctx, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n > 0 {
			saved = n > 0
			return err
		}
		// Refused: the row exists, and this transaction holds the write
		// lock, so it is the row that refused.
		return tx.StmtContext(ctx, s.tenant).QueryRowContext(ctx, id.Aggregate, id.ID).Scan(&stored)
	}})
	switch {
	case err != nil:
		return false, fmt.Errorf("sqlite: save snapshot of %s v%d: %w", id, snap.Version, err)
	case !saved && stored != tenant:
		return false, snapshot.TenantMismatch(id)
	}
	return saved, nil
}

// Load implements snapshot.Store.
func (s *SnapshotStore) Load(ctx context.Context, id factum.AggregateID) (snapshot.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return snapshot.Snapshot{}, err
	}
	if err := id.Validate(); err != nil {
		return snapshot.Snapshot{}, err
	}
	if err := s.checkContext(id.NamedAggregate); err != nil {
		return snapshot.Snapshot{}, err
	}
	snap, err := scanSnapshot(id.NamedAggregate, s.db.Reader().QueryRowContext(ctx, s.load, id.Aggregate, id.ID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return snapshot.Snapshot{}, snapshot.NotFound(id)
	case err != nil:
		return snapshot.Snapshot{}, fmt.Errorf("sqlite: load snapshot of %s: %w", id, err)
	case snap.AggregateID.Tenant != id.TenantOrDefault():
		return snapshot.Snapshot{}, snapshot.TenantMismatch(id)
	}
	return snap, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanSnapshot reads the snapshotColumns of one row.
func scanSnapshot(named factum.NamedAggregate, row scanner) (snapshot.Snapshot, error) {
	s := snapshot.Snapshot{AggregateID: factum.AggregateID{NamedAggregate: named}}
	var first, last, taken int64
	var state []byte // a copy of the driver's text
	if err := row.Scan(&s.AggregateID.ID, &s.AggregateID.Tenant, &s.OwnerID, &s.Version, &s.EventID, &s.FirstOperator,
		&s.Operator, &first, &last, &taken, &s.Deleted, &state); err != nil {
		return snapshot.Snapshot{}, err
	}
	s.State = state
	s.FirstEventTime, s.EventTime, s.SnapshotTime = fromMillis(first), fromMillis(last), fromMillis(taken)
	return s, nil
}

// toMillis is a time as the query document holds it: epoch milliseconds,
// 0 for the zero time.
func toMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMillis is the inverse of toMillis.
func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
