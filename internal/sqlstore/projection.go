package sqlstore

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/projection"
)

// ProjectionTx is a projection.Txn over a backend's transaction: the read
// model's statements and the projections' checkpoints in one transaction.
type ProjectionTx struct {
	cps *Checkpoints
	tx  Executor
	// lockLoad and ensure make Checkpoint hold the group's row until the
	// transaction ends, on a database whose transactions run side by side.
	lockLoad, ensure string
	end              func(ctx context.Context, commit bool) error
	// Raw is the driver's transaction (*sql.Tx, pgx.Tx).
	Raw any
}

var _ projection.Txn = (*ProjectionTx)(nil)

// NewProjectionTx returns the projection transaction tx of the checkpoints
// cps; end commits or rolls back the transaction (a rollback after the end
// is no error). With lock, Checkpoint makes the group's row (at position
// zero) if there is none and locks it, so runners of one projection take
// turns; without, the database runs one write transaction at a time.
func NewProjectionTx(cps *Checkpoints, tx Executor, raw any, lock bool, end func(ctx context.Context, commit bool) error) *ProjectionTx {
	t := &ProjectionTx{cps: cps, tx: tx, lockLoad: cps.Load, end: end, Raw: raw}
	if lock {
		t.lockLoad = cps.Load + ` FOR UPDATE`
		t.ensure = "INSERT INTO " + cps.table + " (context, processor, name, tx, seq) VALUES (" + cps.d.params(1, 3) + ", 0, 0) ON CONFLICT DO NOTHING"
	}
	return t
}

// Exec implements projection.Tx.
func (t *ProjectionTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return t.tx.Exec(ctx, query, args...)
}

// QueryRow implements projection.Tx.
func (t *ProjectionTx) QueryRow(ctx context.Context, query string, args ...any) projection.Row {
	return t.tx.QueryRow(ctx, query, args...)
}

// Checkpoint implements projection.Txn.
func (t *ProjectionTx) Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error) {
	if err := event.ValidateGroup(group); err != nil {
		return factum.Position{}, err
	}
	if t.ensure != "" {
		if _, err := t.tx.Exec(ctx, t.ensure, group.Context, group.Processor, group.Name); err != nil {
			return factum.Position{}, fmt.Errorf("%s: checkpoint of %s: %w", t.cps.d.Name, group, err)
		}
	}
	return t.cps.load(ctx, t.tx, t.lockLoad, group)
}

// SaveCheckpoint implements projection.Txn.
func (t *ProjectionTx) SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error {
	if err := event.ValidateGroup(group); err != nil {
		return err
	}
	if err := event.ValidatePosition(pos); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, t.cps.Upsert, t.cps.UpsertArgs(group, pos)...); err != nil {
		return fmt.Errorf("%s: save checkpoint of %s at %s: %w", t.cps.d.Name, group, pos, err)
	}
	return nil
}

// DeleteCheckpoint implements projection.Txn.
func (t *ProjectionTx) DeleteCheckpoint(ctx context.Context, group factum.Function) error {
	if _, err := t.tx.Exec(ctx, t.cps.Delete, group.Context, group.Processor, group.Name); err != nil {
		return fmt.Errorf("%s: delete checkpoint of %s: %w", t.cps.d.Name, group, err)
	}
	return nil
}

// Commit implements projection.Txn.
func (t *ProjectionTx) Commit(ctx context.Context) error { return t.end(ctx, true) }

// Rollback implements projection.Txn.
func (t *ProjectionTx) Rollback(ctx context.Context) error { return t.end(ctx, false) }

// BeginFunc starts a backend's transaction for a projection: the executor
// over it, the driver's transaction, and the function that ends it (a
// rollback after the end is no error).
type BeginFunc func(ctx context.Context) (tx Executor, raw any, end func(ctx context.Context, commit bool) error, err error)

// Projections is the projection.Store of one bounded context: the read
// model's transactions, with the context's checkpoints in them.
type Projections struct {
	cps     *Checkpoints
	context string
	lock    bool
	begin   BeginFunc
}

var _ projection.Store = (*Projections)(nil)

// NewProjections returns the projection store of boundedContext over the
// checkpoints cps, starting transactions with begin; lock is as for
// NewProjectionTx.
func NewProjections(cps *Checkpoints, boundedContext string, lock bool, begin BeginFunc) *Projections {
	return &Projections{cps: cps, context: boundedContext, lock: lock, begin: begin}
}

// Begin implements projection.Store.
func (p *Projections) Begin(ctx context.Context) (projection.Txn, error) {
	tx, raw, end, err := p.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: projection store %s: %w", p.cps.d.Name, p.context, err)
	}
	return NewProjectionTx(p.cps, tx, raw, p.lock, end), nil
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
