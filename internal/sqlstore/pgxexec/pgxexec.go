// Package pgxexec adapts pgx to the SQL core: a pool or transaction as
// sqlstore.Executor, and projections' transactions, reads and pipelined
// statement batches over pgx. It is a package of its own so that only the
// PostgreSQL backend links pgx.
package pgxexec

import (
	"context"

	"github.com/factum-go/factum/internal/sqlstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Conn is what pgx's pool, connection and transaction have in common.
type Conn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// New is an Executor over a pgx pool, connection or transaction.
func New(c Conn) sqlstore.Executor { return executor{c} }

type executor struct{ c Conn }

func (e executor) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := e.c.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (e executor) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return e.c.Query(ctx, query, args...)
}

func (e executor) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return e.c.QueryRow(ctx, query, args...)
}
