package pgxexec

import (
	"context"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

// beginner is what pgx's pool, connection and transaction (a savepoint)
// have to start a transaction.
type beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

var _ sqlstore.TxRunner = executor{}

// InTx implements sqlstore.TxRunner: fn runs in a transaction, committed
// when it returns nil and rolled back otherwise.
func (e executor) InTx(ctx context.Context, fn func(ctx context.Context, ex sqlstore.Executor) error) error {
	b, ok := e.c.(beginner)
	if !ok {
		return fn(ctx, e)
	}
	tx, err := b.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(ctx, executor{tx}); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
