package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query/sqlquery"
	"github.com/factum-go/factum/snapshot"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed migrations/snapshot/*.sql
var snapshotMigrations embed.FS

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
// A SnapshotStore is safe for concurrent use.
type SnapshotStore struct {
	db      *DB
	context string
	table   string // quoted identifier
	upsert  string
	tenant  string
	load    string
	tr      *sqlquery.Translator
}

var _ snapshot.QueryStore = (*SnapshotStore)(nil)

// NewSnapshotStore returns the snapshot store of boundedContext in db,
// applying its schema migrations (component "snapshot:<context>", table
// factum_<context>_snapshots) if they are not applied yet. Context names
// longer than 44 bytes are refused, as PostgreSQL would truncate the table
// names.
func NewSnapshotStore(ctx context.Context, db *DB, boundedContext string) (*SnapshotStore, error) {
	if db == nil {
		return nil, factum.IllegalArgument("postgres: nil DB")
	}
	if err := validTableContext(boundedContext); err != nil {
		return nil, err
	}
	prefix := "factum_" + boundedContext + "_"
	if err := db.Migrate(ctx, snapshotMigrations, "migrations/snapshot", "snapshot:"+boundedContext, prefix); err != nil {
		return nil, err
	}
	tr, err := sqlquery.New(sqlquery.PostgreSQL(), sqlquery.SnapshotSchema())
	if err != nil {
		return nil, err
	}
	table := `"` + prefix + `snapshots"`
	return &SnapshotStore{
		db:      db,
		context: boundedContext,
		table:   table,
		upsert: `INSERT INTO ` + table + ` AS s (aggregate, ` + snapshotColumns + `)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
			ON CONFLICT (aggregate, aggregate_id) DO UPDATE SET owner_id = EXCLUDED.owner_id, version = EXCLUDED.version,
				event_id = EXCLUDED.event_id, first_operator = EXCLUDED.first_operator, operator = EXCLUDED.operator,
				first_event_time = EXCLUDED.first_event_time, event_time = EXCLUDED.event_time,
				snapshot_time = EXCLUDED.snapshot_time, deleted = EXCLUDED.deleted, state = EXCLUDED.state
			WHERE s.version <= EXCLUDED.version AND s.tenant_id = EXCLUDED.tenant_id`,
		tenant: `SELECT tenant_id FROM ` + table + ` WHERE aggregate = $1 AND aggregate_id = $2`,
		load:   `SELECT ` + snapshotColumns + ` FROM ` + table + ` WHERE aggregate = $1 AND aggregate_id = $2`,
		tr:     tr,
	}, nil
}

// snapshotColumns are the columns of sqlquery.SnapshotSchema in the order
// scanSnapshot reads them.
const snapshotColumns = `aggregate_id, tenant_id, owner_id, version, event_id, first_operator, operator,
	first_event_time, event_time, snapshot_time, deleted, state`

// Context returns the bounded context the store serves.
func (s *SnapshotStore) Context() string { return s.context }

// checkContext refuses aggregates of another bounded context: the table
// holds one context only.
func (s *SnapshotStore) checkContext(named factum.NamedAggregate) error {
	if named.Context != s.context {
		return factum.IllegalArgument(fmt.Sprintf("postgres: the snapshot store of context %q cannot serve %s", s.context, named))
	}
	return nil
}

// snapshotSaveAttempts bounds how often Save looks again for a row that
// refused its upsert and was gone when read (only a manual delete does
// that).
const snapshotSaveAttempts = 3

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
	if err := checkSnapshotText(&snap); err != nil {
		return false, err
	}
	id := snap.AggregateID
	tenant := id.TenantOrDefault()
	for range snapshotSaveAttempts {
		tag, err := s.db.Pool().Exec(ctx, s.upsert, id.Aggregate, id.ID, tenant, snap.OwnerID, snap.Version, snap.EventID,
			snap.FirstOperator, snap.Operator, toMillis(snap.FirstEventTime), toMillis(snap.EventTime),
			toMillis(snap.SnapshotTime), snap.Deleted, []byte(snap.State))
		if err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && len(pgErr.Code) == 5 && pgErr.Code[:2] == "22" {
				// A data exception: the value, not the database, is at fault.
				return false, factum.Errorf(factum.CodeIllegalArgument, "postgres: the database refused the snapshot of %s v%d: %w", id, snap.Version, err)
			}
			return false, fmt.Errorf("postgres: save snapshot of %s v%d: %w", id, snap.Version, err)
		}
		if tag.RowsAffected() > 0 {
			return true, nil
		}
		var stored string
		err = s.db.Pool().QueryRow(ctx, s.tenant, id.Aggregate, id.ID).Scan(&stored)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			continue // deleted since the upsert met it: try again
		case err != nil:
			return false, fmt.Errorf("postgres: save snapshot of %s v%d: %w", id, snap.Version, err)
		case stored != tenant:
			return false, snapshot.TenantMismatch(id)
		}
		return false, nil
	}
	return false, factum.Errorf(factum.CodeInternalServerError, "postgres: save snapshot of %s v%d: the stored row kept disappearing", id, snap.Version)
}

// checkSnapshotText refuses what PostgreSQL text and jsonb cannot hold,
// before the statement.
func checkSnapshotText(snap *snapshot.Snapshot) error {
	for _, f := range [...]struct{ what, v string }{{"owner ID", snap.OwnerID}, {"event ID", snap.EventID},
		{"first operator", snap.FirstOperator}, {"operator", snap.Operator}} {
		if err := esCheckText(fmt.Sprintf("snapshot of %s: %s", snap.AggregateID, f.what), f.v); err != nil {
			return err
		}
	}
	if !utf8.Valid(snap.State) {
		return factum.IllegalArgument(fmt.Sprintf("snapshot of %s: state is not valid UTF-8", snap.AggregateID))
	}
	return nil
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
	snap, err := scanSnapshot(id.NamedAggregate, s.db.Pool().QueryRow(ctx, s.load, id.Aggregate, id.ID))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return snapshot.Snapshot{}, snapshot.NotFound(id)
	case err != nil:
		return snapshot.Snapshot{}, fmt.Errorf("postgres: load snapshot of %s: %w", id, err)
	case snap.AggregateID.Tenant != id.TenantOrDefault():
		return snapshot.Snapshot{}, snapshot.TenantMismatch(id)
	}
	return snap, nil
}

// scanSnapshot reads the snapshotColumns of one row.
func scanSnapshot(named factum.NamedAggregate, row pgx.Row) (snapshot.Snapshot, error) {
	s := snapshot.Snapshot{AggregateID: factum.AggregateID{NamedAggregate: named}}
	var first, last, taken int64
	var state []byte
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
