package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/projection"
)

// ProjectionTx is a projection.Txn over a backend's transaction: the read
// model's statements, the projections' checkpoints, their builds' state
// and failure marks in one transaction.
type ProjectionTx struct {
	p *Projections
	// tx runs each statement after the queued ones (WithTables's copies
	// share it).
	tx     *txQueue
	tables projection.Tables
	// lockLoad makes Checkpoint hold the group's row until the
	// transaction ends, on a database whose transactions run side by side.
	lockLoad string
	end      func(ctx context.Context, commit bool) error
	// Raw is the driver's transaction (*sql.Tx, pgx.Tx).
	Raw any
}

var _ projection.Txn = (*ProjectionTx)(nil)

// Exec implements projection.Tx: the queued statements run first.
func (t *ProjectionTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return t.tx.Exec(ctx, query, args...)
}

// QueryRow implements projection.Tx.
func (t *ProjectionTx) QueryRow(ctx context.Context, query string, args ...any) projection.Row {
	return t.tx.QueryRow(ctx, query, args...)
}

// Table implements projection.Tx.
func (t *ProjectionTx) Table(name string) string { return t.tables.Name(name) }

// WithTables implements projection.Txn.
func (t *ProjectionTx) WithTables(tables projection.Tables) projection.Txn {
	c := *t
	c.tables = tables
	return &c
}

// Checkpoint implements projection.Txn.
func (t *ProjectionTx) Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error) {
	if err := event.ValidateGroup(group); err != nil {
		return factum.Position{}, err
	}
	return t.p.cps.load(ctx, t.tx, t.lockLoad, group)
}

// SaveCheckpoint implements projection.Txn.
func (t *ProjectionTx) SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error {
	if err := event.ValidateGroup(group); err != nil {
		return err
	}
	if err := event.ValidatePosition(pos); err != nil {
		return err
	}
	// Queued: it runs in the round trip of the projection's statements.
	t.tx.add(queuedStatement{
		Statement: Statement{SQL: t.p.cps.Upsert, Args: t.p.cps.UpsertArgs(group, pos)}, index: -1,
		what: fmt.Sprintf("save checkpoint of %s at %s", group, pos),
	})
	return nil
}

// DeleteCheckpoint implements projection.Txn.
func (t *ProjectionTx) DeleteCheckpoint(ctx context.Context, group factum.Function) error {
	if _, err := t.tx.Exec(ctx, t.p.cps.Delete, group.Context, group.Processor, group.Name); err != nil {
		return fmt.Errorf("%s: delete checkpoint of %s: %w", t.p.cps.d.Name, group, err)
	}
	return nil
}

// State implements projection.Txn: on a database whose transactions run
// side by side, the row is made (empty) if there is none and locked.
func (t *ProjectionTx) State(ctx context.Context, name string) (projection.State, error) {
	if !t.p.lock {
		return t.p.loadState(ctx, t.tx, t.p.stateLoad, name)
	}
	q := t.p.stateLoad + ` FOR UPDATE`
	s, found, err := t.p.loadStateRow(ctx, t.tx, q, name)
	if err != nil || found {
		return s, err
	}
	// No row to lock yet: make one (a concurrent maker's wins), then lock.
	if _, err := t.tx.Exec(ctx, t.p.stateEnsure, name); err != nil {
		return projection.State{}, fmt.Errorf("%s: projection state of %s: %w", t.p.cps.d.Name, name, err)
	}
	return t.p.loadState(ctx, t.tx, q, name)
}

// SaveState implements projection.Txn.
func (t *ProjectionTx) SaveState(ctx context.Context, s projection.State) error {
	doc, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("%s: projection state of %s: %w", t.p.cps.d.Name, s.Name, err)
	}
	args := []any{s.Name, string(doc)}
	if t.p.cps.d.Stamp != nil {
		args = append(args, t.p.cps.d.Stamp().UnixMilli())
	}
	if _, err := t.tx.Exec(ctx, t.p.stateSave, args...); err != nil {
		return fmt.Errorf("%s: save projection state of %s: %w", t.p.cps.d.Name, s.Name, err)
	}
	return nil
}

// MarkFailed implements projection.Txn.
func (t *ProjectionTx) MarkFailed(ctx context.Context, group factum.Function, streamID string) error {
	if _, err := t.tx.Exec(ctx, t.p.markInsert, group.Processor, group.Name, streamID); err != nil {
		return fmt.Errorf("%s: mark stream %s failed in %s: %w", t.p.cps.d.Name, streamID, group, err)
	}
	return nil
}

// Unmark implements projection.Txn.
func (t *ProjectionTx) Unmark(ctx context.Context, group factum.Function, streamID string) (bool, error) {
	n, err := t.tx.Exec(ctx, t.p.markDelete+` AND stream_id = `+t.p.cps.d.Param(3), group.Processor, group.Name, streamID)
	if err != nil {
		return false, fmt.Errorf("%s: unmark stream %s in %s: %w", t.p.cps.d.Name, streamID, group, err)
	}
	return n > 0, nil
}

// DeleteMarks implements projection.Txn.
func (t *ProjectionTx) DeleteMarks(ctx context.Context, group factum.Function) error {
	if _, err := t.tx.Exec(ctx, t.p.markDelete, group.Processor, group.Name); err != nil {
		return fmt.Errorf("%s: delete the marks of %s: %w", t.p.cps.d.Name, group, err)
	}
	return nil
}

// Commit implements projection.Txn.
func (t *ProjectionTx) Commit(ctx context.Context) error {
	if err := t.Flush(ctx); err != nil {
		return err
	}
	return t.end(ctx, true)
}

// Rollback implements projection.Txn.
func (t *ProjectionTx) Rollback(ctx context.Context) error {
	t.tx.pending = nil
	return t.end(ctx, false)
}

// BeginFunc starts a backend's transaction for a projection: the executor
// over it, the driver's transaction, and the function that ends it (a
// rollback after the end is no error).
type BeginFunc func(ctx context.Context) (tx Executor, raw any, end func(ctx context.Context, commit bool) error, err error)

// ReadFunc runs a projection's read query outside any write transaction
// and returns at most limit rows (Truncated when there were more).
type ReadFunc func(ctx context.Context, limit int, query string, args ...any) (projection.Result, error)

// ProjectionsConfig is what a backend gives NewProjections.
type ProjectionsConfig struct {
	// Checkpoints are the context's checkpoints.
	Checkpoints *Checkpoints
	// Context is the bounded context.
	Context string
	// Lock makes Checkpoint and State lock their rows (made first if there
	// are none), for a database whose transactions run side by side;
	// without, the database runs one write transaction at a time.
	Lock bool
	// Begin starts a transaction; Read runs a read query; Reader runs the
	// state's reads outside a transaction.
	Begin  BeginFunc
	Read   ReadFunc
	Reader Executor
}

// Projections is the projection.Store of one bounded context: the read
// model's transactions, with the context's checkpoints, the projections'
// build state (factum_<context>_projections) and failure marks
// (factum_<context>_projection_marks) in them.
type Projections struct {
	cps    *Checkpoints
	lock   bool
	begin  BeginFunc
	read   ReadFunc
	reader Executor

	stateLoad, stateEnsure, stateSave string
	markInsert, markDelete            string

	// decoded is the last state document read per projection and its
	// decoding: a runner reads its state every round, and the document
	// rarely changes, so decoding it again would be most of the read.
	decodedMu sync.Mutex
	decoded   map[string]decodedState
}

// decodedState is a state document and what it decodes to.
type decodedState struct {
	doc   string
	state projection.State
}

var _ projection.Store = (*Projections)(nil)

// OpenProjections returns the projection store of boundedContext in db,
// applying the checkpoint and projection tables' migrations (from fsys)
// if they are not applied yet; cfg's Checkpoints and Context are set
// here.
func OpenProjections(ctx context.Context, d *Dialect, db Migrator, fsys fs.FS, boundedContext string, cfg ProjectionsConfig) (*Projections, error) {
	cps, err := NewCheckpoints(ctx, d, db, fsys, boundedContext, nil, nil)
	if err != nil {
		return nil, err
	}
	if _, err := Setup(ctx, d, db, Component{Name: "projection", FS: fsys, Table: "projections"}, boundedContext); err != nil {
		return nil, err
	}
	cfg.Checkpoints, cfg.Context = cps, boundedContext
	return NewProjections(cfg), nil
}

// NewProjections returns the projection store of cfg; the tables named
// above come from the migrations of component "projection:<context>",
// which the backend applies first.
func NewProjections(cfg ProjectionsConfig) *Projections {
	d := cfg.Checkpoints.d
	states := ContextTable(cfg.Context, "projections")
	marks := ContextTable(cfg.Context, "projection_marks")
	p := &Projections{cps: cfg.Checkpoints, lock: cfg.Lock, begin: cfg.Begin, read: cfg.Read, reader: cfg.Reader,
		stateLoad:   `SELECT state FROM ` + states + ` WHERE name = ` + d.Param(1),
		stateEnsure: `INSERT INTO ` + states + ` (name, state) VALUES (` + d.Param(1) + `, '{}') ON CONFLICT DO NOTHING`,
		stateSave: `INSERT INTO ` + states + ` (name, state) VALUES (` + d.params(1, 2) + `)
			ON CONFLICT (name) DO UPDATE SET state = excluded.state, updated_at = now()`,
		markInsert: `INSERT INTO ` + marks + ` (processor, name, stream_id) VALUES (` + d.params(1, 3) + `) ON CONFLICT DO NOTHING`,
		markDelete: `DELETE FROM ` + marks + ` WHERE processor = ` + d.Param(1) + ` AND name = ` + d.Param(2),
	}
	if d.Stamp != nil {
		p.stateEnsure = `INSERT INTO ` + states + ` (name, state, updated_at) VALUES (` + d.Param(1) + `, '{}', 0) ON CONFLICT DO NOTHING`
		p.stateSave = `INSERT INTO ` + states + ` (name, state, updated_at) VALUES (` + d.params(1, 3) + `)
			ON CONFLICT (name) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`
	}
	return p
}

// Begin implements projection.Store.
func (p *Projections) Begin(ctx context.Context) (projection.Txn, error) {
	tx, raw, end, err := p.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: projection store %s: %w", p.cps.d.Name, p.cps.table, err)
	}
	t := &ProjectionTx{p: p, tx: &txQueue{raw: tx, d: p.cps.d}, lockLoad: p.cps.Load, end: end, Raw: raw}
	if p.lock {
		// One statement makes the row if there is none and locks it: an
		// upsert that changes nothing returns the row as last committed.
		t.lockLoad = "INSERT INTO " + p.cps.table + " AS c (context, processor, name, tx, seq) VALUES (" + p.cps.d.params(1, 3) +
			", 0, 0) ON CONFLICT (context, processor, name) DO UPDATE SET tx = c.tx RETURNING tx, seq"
	}
	return t, nil
}

// State implements projection.Store.
func (p *Projections) State(ctx context.Context, name string) (projection.State, error) {
	return p.loadState(ctx, p.reader, p.stateLoad, name)
}

func (p *Projections) loadState(ctx context.Context, ex Executor, q, name string) (projection.State, error) {
	s, _, err := p.loadStateRow(ctx, ex, q, name)
	return s, err
}

// loadStateRow reads a projection's state with q and reports whether it
// has a row.
func (p *Projections) loadStateRow(ctx context.Context, ex Executor, q, name string) (projection.State, bool, error) {
	var doc string
	err := ex.QueryRow(ctx, q, name).Scan(&doc)
	if p.cps.d.NoRows(err) {
		return projection.State{Name: name}, false, nil
	}
	if err != nil {
		return projection.State{}, false, fmt.Errorf("%s: projection state of %s: %w", p.cps.d.Name, name, err)
	}
	if s, ok := p.decodedState(name, doc); ok {
		return s, true, nil
	}
	var s projection.State
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		return projection.State{}, false, fmt.Errorf("%s: projection state of %s: %w", p.cps.d.Name, name, err)
	}
	s.Name = name
	p.decodedMu.Lock()
	if p.decoded == nil {
		p.decoded = map[string]decodedState{}
	}
	p.decoded[name] = decodedState{doc: doc, state: cloneState(s)}
	p.decodedMu.Unlock()
	return s, true, nil
}

// decodedState returns the decoding of doc, the state document of
// projection name, if it is the last one decoded.
func (p *Projections) decodedState(name, doc string) (projection.State, bool) {
	p.decodedMu.Lock()
	defer p.decodedMu.Unlock()
	d, ok := p.decoded[name]
	if !ok || d.doc != doc {
		return projection.State{}, false
	}
	return cloneState(d.state), true
}

// cloneState returns a copy of s sharing nothing with it: the caller may
// change the builds' table lists.
func cloneState(s projection.State) projection.State {
	for _, b := range []*projection.Build{&s.Live, &s.Next, &s.Retired} {
		b.Tables = slices.Clone(b.Tables)
	}
	return s
}

// Query implements projection.Store.
func (p *Projections) Query(ctx context.Context, limit int, query string, args ...any) (projection.Result, error) {
	if limit < 1 {
		return projection.Result{}, factum.IllegalArgument("projection query: limit less than 1")
	}
	return p.read(ctx, limit, query, args...)
}

// Raw returns the driver's transaction of type T behind a projection's
// transaction, and whether there is one.
func Raw[T any](tx projection.Tx) (T, bool) {
	p, ok := tx.(*ProjectionTx)
	if !ok {
		var zero T
		return zero, false
	}
	raw, ok := p.Raw.(T)
	return raw, ok
}
