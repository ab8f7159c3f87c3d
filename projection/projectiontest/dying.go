package projectiontest

import (
	"context"
	"errors"
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/projection"
)

// errDead is every call's error once a dyingStore has died.
var errDead = errors.New("kit: the process died")

// dyingStore is a store whose process dies after a number of calls: from
// then on no call reaches the database (a transaction in hand rolls back,
// as the database does for a killed process's), as after a SIGKILL. It
// also counts the transactions committed and the checkpoints saved.
type dyingStore struct {
	projection.Store
	mu     sync.Mutex
	budget int // calls left before it dies; negative: it never dies
	dead   bool
	// commits counts the transactions committed, saves the checkpoints
	// saved in them.
	commits, saves int
}

// call spends one call of the budget and reports whether the process is
// still alive to make it.
func (d *dyingStore) call() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return false
	}
	if d.budget == 0 {
		d.dead = true
		return false
	}
	if d.budget > 0 {
		d.budget--
	}
	return true
}

func (d *dyingStore) isDead() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dead
}

func (d *dyingStore) counted() (commits, saves int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.commits, d.saves
}

func (d *dyingStore) Begin(ctx context.Context) (projection.Txn, error) {
	if !d.call() {
		return nil, errDead
	}
	tx, err := d.Store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &dyingTxn{Txn: tx, d: d}, nil
}

func (d *dyingStore) State(ctx context.Context, name string) (projection.State, error) {
	if !d.call() {
		return projection.State{}, errDead
	}
	return d.Store.State(ctx, name)
}

// dyingTxn is a transaction of a dyingStore.
type dyingTxn struct {
	projection.Txn
	d     *dyingStore
	saves int
}

func (t *dyingTxn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if !t.d.call() {
		return 0, errDead
	}
	return t.Txn.Exec(ctx, query, args...)
}

func (t *dyingTxn) Checkpoint(ctx context.Context, group factum.Function) (factum.Position, error) {
	if !t.d.call() {
		return factum.Position{}, errDead
	}
	return t.Txn.Checkpoint(ctx, group)
}

func (t *dyingTxn) SaveCheckpoint(ctx context.Context, group factum.Function, pos factum.Position) error {
	if !t.d.call() {
		return errDead
	}
	t.saves++
	return t.Txn.SaveCheckpoint(ctx, group, pos)
}

func (t *dyingTxn) Flush(ctx context.Context) error {
	if !t.d.call() {
		return errDead
	}
	return t.Txn.Flush(ctx)
}

func (t *dyingTxn) Commit(ctx context.Context) error {
	if !t.d.call() {
		_ = t.Txn.Rollback(ctx)
		return errDead
	}
	if err := t.Txn.Commit(ctx); err != nil {
		return err
	}
	t.d.mu.Lock()
	t.d.commits++
	t.d.saves += t.saves
	t.d.mu.Unlock()
	return nil
}

func (t *dyingTxn) WithTables(tables projection.Tables) projection.Txn {
	return &dyingTxn{Txn: t.Txn.WithTables(tables), d: t.d, saves: t.saves}
}
