package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"time"
	"unicode/utf8"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/sqlquery"
	"github.com/factum-go/factum/snapshot"
)

// SnapshotColumns are the columns of sqlquery.SnapshotSchema in the order
// the snapshot statements bind and scan them.
const SnapshotColumns = `aggregate_id, tenant_id, owner_id, version, event_id, first_operator, operator,
	first_event_time, event_time, snapshot_time, deleted, state`

// snapshotQueryColumns are SnapshotColumns as sqlquery selects them.
var snapshotQueryColumns = sqlquery.SnapshotColumns()

// snapshotSaveAttempts bounds how often Save looks again for a row that
// refused its upsert and was gone when read (only a manual delete does
// that).
const snapshotSaveAttempts = 3

// Snapshots is the snapshot backend of one bounded context over one
// table, the same on every dialect: the backend says where reads and
// writes run. The SQL stores put a snapshot.BatchFront over it, which
// makes the checks of the contract; it runs queries itself
// (snapshot.Finder) and saves batches (snapshot.BatchSaver,
// snapshot.CheckpointBatchSaver).
type Snapshots struct {
	d       *Dialect
	context string
	table   string
	read    Executor
	dynamic Executor // read, unprepared: for translated queries
	write   WriteFunc
	tr      *sqlquery.Translator

	// UpsertSQL and TenantSQL are the save's statements, for a backend
	// that prepares them; LoadSQL reads one snapshot.
	UpsertSQL, TenantSQL, LoadSQL string
	scanSQL                       string

	// join returns the shared checkpoint store under a checkpoint store
	// of the same database, nil for any other: a batch saved with it
	// writes its checkpoint in the snapshots' transaction.
	join func(event.CheckpointStore) *Checkpoints

	// Front is the front end over the backend that a SQL store embeds:
	// it serves the backend's bounded context, its errors named after the
	// dialect.
	Front *snapshot.BatchFront
}

var (
	_ snapshot.Backend              = (*Snapshots)(nil)
	_ snapshot.Finder               = (*Snapshots)(nil)
	_ snapshot.BatchSaver           = (*Snapshots)(nil)
	_ snapshot.CheckpointBatchSaver = (*Snapshots)(nil)
)

// NewSnapshots returns the snapshot backend of boundedContext in db, and
// its front end, reading through read and saving through write (nil:
// through read, as it comes), applying its schema migrations from fsys
// (component "snapshot:<context>", table factum_<context>_snapshots) if
// they are not applied yet. join finds the checkpoint stores of the same
// database (see CheckpointsOf); nil joins none.
func NewSnapshots(ctx context.Context, d *Dialect, db Migrator, fsys fs.FS, boundedContext string, read Executor, write WriteFunc,
	join func(event.CheckpointStore) *Checkpoints) (*Snapshots, error) {
	table, err := Setup(ctx, d, db, Component{Name: "snapshot", FS: fsys, Table: "snapshots"}, boundedContext)
	if err != nil {
		return nil, err
	}
	tr, err := sqlquery.New(d.Query, sqlquery.SnapshotSchema())
	if err != nil {
		return nil, err
	}
	s := newSnapshots(d, boundedContext, table, read, write, tr)
	s.join = join
	if s.Front, err = snapshot.NewBatch(s, snapshot.Config{Context: boundedContext, Name: d.Name}); err != nil {
		return nil, err
	}
	return s, nil
}

func newSnapshots(d *Dialect, boundedContext, table string, read Executor, write WriteFunc, tr *sqlquery.Translator) *Snapshots {
	p := d.Param
	key := ` WHERE aggregate = ` + p(1) + ` AND aggregate_id = ` + p(2)
	return &Snapshots{
		d: d, context: boundedContext, table: table, read: read, dynamic: Unprepared(read), write: write, tr: tr,
		// The WHERE keeps a lower version from overwriting a higher one,
		// lets an equal version repair, and never moves a snapshot to
		// another tenant.
		UpsertSQL: `INSERT INTO ` + table + ` (aggregate, ` + SnapshotColumns + `)
		VALUES (` + d.params(1, 13) + `)
		ON CONFLICT (aggregate, aggregate_id) DO UPDATE SET owner_id = excluded.owner_id, version = excluded.version,
			event_id = excluded.event_id, first_operator = excluded.first_operator, operator = excluded.operator,
			first_event_time = excluded.first_event_time, event_time = excluded.event_time,
			snapshot_time = excluded.snapshot_time, deleted = excluded.deleted, state = excluded.state
		WHERE ` + table + `.version <= excluded.version AND ` + table + `.tenant_id = excluded.tenant_id`,
		TenantSQL: `SELECT tenant_id FROM ` + table + key,
		LoadSQL:   `SELECT ` + SnapshotColumns + ` FROM ` + table + key,
		scanSQL: `SELECT ` + SnapshotColumns + ` FROM ` + table + ` WHERE aggregate = ` + p(1) + ` AND aggregate_id > ` + p(2) +
			` ORDER BY aggregate_id LIMIT ` + p(3),
	}
}

// Context returns the bounded context the store serves.
func (s *Snapshots) Context() string { return s.context }

// Table returns the quoted snapshot table.
func (s *Snapshots) Table() string { return s.table }

// Save implements snapshot.Backend: one upsert; when it changes no row,
// the stored tenant, read where the upsert ran, says why (another tenant
// is RefusedTenant, the same tenant a stale version). A row's tenant never
// changes once written, so that read cannot be misled by a save in
// between.
func (s *Snapshots) Save(ctx context.Context, snap snapshot.Snapshot) (snapshot.Outcome, error) {
	if err := s.checkText(&snap); err != nil {
		return 0, err
	}
	id := snap.AggregateID
	tenant := id.Tenant
	args := []any{id.Aggregate, id.ID, tenant, snap.OwnerID, snap.Version, snap.EventID, snap.FirstOperator, snap.Operator,
		ToMillis(snap.FirstEventTime), ToMillis(snap.EventTime), ToMillis(snap.SnapshotTime), snap.Deleted, s.d.JSON(snap.State)}
	for range snapshotSaveAttempts {
		var op snapshotSave
		var err error
		if s.write == nil {
			err = s.save(ctx, s.read, &op, id, args)
		} else {
			err = s.write(ctx, func(ctx context.Context, ex Executor) error { return s.save(ctx, ex, &op, id, args) })
		}
		saved, gone, stored := op.saved, op.gone, op.stored
		switch {
		case err != nil && s.d.DataError != nil && s.d.DataError(err):
			return 0, factum.Errorf(factum.CodeIllegalArgument, "%s: the database refused the snapshot of %s v%d: %w", s.d.Name, id, snap.Version, err)
		case err != nil:
			return 0, fmt.Errorf("%s: save snapshot of %s v%d: %w", s.d.Name, id, snap.Version, err)
		case gone:
			continue
		case saved:
			return snapshot.Saved, nil
		case stored != tenant:
			return snapshot.RefusedTenant, nil
		}
		return snapshot.Stale, nil
	}
	return 0, factum.Errorf(factum.CodeInternalServerError, "%s: save snapshot of %s v%d: the stored row kept disappearing", s.d.Name, id, snap.Version)
}

// snapshotSave is the outcome of one save statement.
type snapshotSave struct {
	saved, gone bool
	stored      string // the row's tenant, when the upsert changed nothing
}

// save runs the upsert through ex and, when it changes no row, reads the
// stored tenant to say why.
func (s *Snapshots) save(ctx context.Context, ex Executor, op *snapshotSave, id factum.AggregateID, args []any) error {
	// A batched write runs again, alone, when another write of its batch
	// fails: the outcome is this run's.
	*op = snapshotSave{}
	n, err := ex.Exec(ctx, s.UpsertSQL, args...)
	if err != nil || n > 0 {
		op.saved = n > 0
		return err
	}
	err = ex.QueryRow(ctx, s.TenantSQL, id.Aggregate, id.ID).Scan(&op.stored)
	if s.d.NoRows(err) {
		op.gone = true // deleted since the upsert met it: try again
		return nil
	}
	return err
}

// checkText refuses what the database's text columns cannot hold, before
// the statement.
func (s *Snapshots) checkText(snap *snapshot.Snapshot) error {
	if !s.d.StrictText {
		return nil
	}
	for _, f := range [...]struct{ what, v string }{{"owner ID", snap.OwnerID}, {"event ID", snap.EventID},
		{"first operator", snap.FirstOperator}, {"operator", snap.Operator}} {
		// The message is written only for a refusal.
		if s.d.CheckText("", f.v) != nil {
			return s.d.CheckText(fmt.Sprintf("snapshot of %s: %s", snap.AggregateID, f.what), f.v)
		}
	}
	if !utf8.Valid(snap.State) {
		return factum.IllegalArgument(fmt.Sprintf("snapshot of %s: state is not valid UTF-8", snap.AggregateID))
	}
	return nil
}

// Load implements snapshot.Backend.
func (s *Snapshots) Load(ctx context.Context, id factum.AggregateID) (snapshot.Snapshot, bool, error) {
	snap, err := scanSnapshot(id.NamedAggregate, s.read.QueryRow(ctx, s.LoadSQL, id.Aggregate, id.ID))
	switch {
	case s.d.NoRows(err):
		return snapshot.Snapshot{}, false, nil
	case err != nil:
		return snapshot.Snapshot{}, false, fmt.Errorf("%s: load snapshot of %s: %w", s.d.Name, id, err)
	}
	return snap, true, nil
}

// Scan implements snapshot.Backend. The columns compare in byte order
// (BINARY, COLLATE "C").
func (s *Snapshots) Scan(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]snapshot.Snapshot, error) {
	return s.query(ctx, s.read, "scan", named, sqlquery.Statement{SQL: s.scanSQL, Args: []any{named.Aggregate, afterID, limit}}, min(limit, 64))
}

// scope restricts a statement to one aggregate type.
func (s *Snapshots) scope(named factum.NamedAggregate) sqlquery.Statement {
	return sqlquery.Statement{SQL: s.tr.Alias() + ".aggregate = " + s.d.Param(1), Args: []any{named.Aggregate}}
}

// Find implements snapshot.Finder.
func (s *Snapshots) Find(ctx context.Context, named factum.NamedAggregate, plan query.Plan) ([]snapshot.Snapshot, error) {
	st, err := s.FindStatement(named, plan)
	if err != nil {
		return nil, err
	}
	return s.query(ctx, s.dynamic, "find", named, st, min(plan.Limit, 64))
}

// query runs a SELECT of SnapshotColumns through ex; what names it in
// errors.
func (s *Snapshots) query(ctx context.Context, ex Executor, what string, named factum.NamedAggregate, st sqlquery.Statement, capacity int) ([]snapshot.Snapshot, error) {
	rows, err := ex.Query(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %s snapshots of %s: %w", s.d.Name, what, named, err)
	}
	defer rows.Close()
	out := make([]snapshot.Snapshot, 0, max(capacity, 0))
	for rows.Next() {
		if err := rowsCancelled(ctx, len(out)); err != nil {
			return nil, err
		}
		snap, err := scanSnapshot(named, rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %s snapshots of %s: %w", s.d.Name, what, named, err)
		}
		out = append(out, snap)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %s snapshots of %s: %w", s.d.Name, what, named, err)
	}
	return out, nil
}

// FindStatement is the SELECT Find runs, for tests of query plans.
func (s *Snapshots) FindStatement(named factum.NamedAggregate, plan query.Plan) (sqlquery.Statement, error) {
	return s.tr.Find(plan, s.table, snapshotQueryColumns, s.scope(named))
}

// Count implements snapshot.Finder.
func (s *Snapshots) Count(ctx context.Context, named factum.NamedAggregate, cond query.Condition) (int64, error) {
	st, err := s.tr.Count(cond, s.table, s.scope(named))
	if err != nil {
		return 0, err
	}
	var n int64
	if err := s.dynamic.QueryRow(ctx, st.SQL, st.Args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: count snapshots of %s: %w", s.d.Name, named, err)
	}
	return n, nil
}

// scanSnapshot reads the SnapshotColumns of one row.
func scanSnapshot(named factum.NamedAggregate, row Row) (snapshot.Snapshot, error) {
	s := snapshot.Snapshot{AggregateID: factum.AggregateID{NamedAggregate: named}}
	var first, last, taken int64
	var state []byte // a copy of the driver's bytes
	if err := row.Scan(&s.AggregateID.ID, &s.AggregateID.Tenant, &s.OwnerID, &s.Version, &s.EventID, &s.FirstOperator,
		&s.Operator, &first, &last, &taken, &s.Deleted, &state); err != nil {
		return snapshot.Snapshot{}, err
	}
	s.State = state
	s.FirstEventTime, s.EventTime, s.SnapshotTime = FromMillis(first), FromMillis(last), FromMillis(taken)
	return s, nil
}

// ToMillis is a time as the query document holds it: epoch milliseconds,
// 0 for the zero time.
func ToMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMillis is the inverse of ToMillis.
func FromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
