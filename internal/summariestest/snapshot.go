package summariestest

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/projection"
	"github.com/factum-go/factum/sqlite"
	"github.com/jackc/pgx/v5"
)

// Snapshot reads, in one transaction of store (SQLite's or PostgreSQL's),
// the summaries' live build, its checkpoint and its read model as of
// it. The transaction holds the build state and the checkpoint
// (PostgreSQL locks their rows; SQLite's write transactions run one at a
// time), so no runner commits a batch, and no switch happens, between
// the reads. Before the first build it returns the zero Position and an
// empty Model.
func Snapshot(ctx context.Context, store projection.Store) (factum.Position, Model, error) {
	p, err := order.SummariesProjection()
	if err != nil {
		return factum.Position{}, Model{}, err
	}
	// The state, then the checkpoint of its live build: the runners'
	// order, so that PostgreSQL never sees them wait on each other.
	tx, err := store.Begin(ctx)
	if err != nil {
		return factum.Position{}, Model{}, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	st, err := tx.State(ctx, order.SummariesName)
	if err != nil {
		return factum.Position{}, Model{}, err
	}
	if st.Live.IsZero() {
		return factum.Position{}, Model{Summaries: map[string]order.Summary{}, Totals: map[string]order.Total{}}, nil
	}
	pos, err := tx.Checkpoint(ctx, p.BuildGroup(st.Live.Number))
	if err != nil {
		return factum.Position{}, Model{}, err
	}
	q, err := querierOf(tx)
	if err != nil {
		return factum.Position{}, Model{}, err
	}
	m, err := read(ctx, q, projection.TablesOf(p, st.Live.Number))
	if err != nil && pos == (factum.Position{}) {
		// The build is live but its tables may not be made yet (its
		// setup runs in a transaction of its own, after the switch).
		return pos, Model{Summaries: map[string]order.Summary{}, Totals: map[string]order.Total{}}, nil
	}
	return pos, m, err
}

// UpTo returns the streams at or before pos.
func UpTo(streams []factum.EventStream, pos factum.Position) []factum.EventStream {
	var out []factum.EventStream
	for _, s := range streams {
		if !pos.Less(s.Position) {
			out = append(out, s)
		}
	}
	return out
}

// querier runs a query and calls scan once per row.
type querier func(ctx context.Context, q string, row func(scan func(dest ...any) error) error) error

func querierOf(tx projection.Tx) (querier, error) {
	var open func(ctx context.Context, q string) (rowSet, error)
	if t, ok := sqlite.SQLTx(tx); ok {
		open = func(ctx context.Context, q string) (rowSet, error) {
			rows, err := t.QueryContext(ctx, q)
			return rows, err
		}
	} else if t, ok := postgres.PgxTx(tx); ok {
		open = func(ctx context.Context, q string) (rowSet, error) {
			rows, err := t.Query(ctx, q)
			return pgxRows{rows}, err
		}
	} else {
		return nil, fmt.Errorf("summariestest: no native transaction behind %T", tx)
	}
	return func(ctx context.Context, q string, row func(func(...any) error) error) error {
		rows, err := open(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := row(rows.Scan); err != nil {
				return err
			}
		}
		return rows.Err()
	}, nil
}

// rowSet is a query's result, as database/sql's *sql.Rows has it.
type rowSet interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// pgxRows is pgx's query result as a rowSet.
type pgxRows struct{ pgx.Rows }

// Close implements rowSet.
func (r pgxRows) Close() error {
	r.Rows.Close()
	return nil
}
