package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// esWriter is one writer slot and the connection it writes on. A writer
// keeps its connection for the store's life, rather than taking any pool
// connection per statement, so that the server's prepared statements and
// plans for the append stay warm on it: a statement prepared on a
// connection it rarely meets again is parsed and planned nearly every
// time, which cost more than the insert itself.
//
// The connection is taken out of the pool (hijacked), so session settings
// made on it never leak to other users of the pool, and it does not count
// against the pool's MaxConns.
type esWriter struct {
	conn *pgx.Conn // nil until first use, and after it broke
}

// connect returns the writer's connection, opening it if needed.
func (w *esWriter) connect(ctx context.Context, s *EventStore) (*pgx.Conn, error) {
	if w.conn != nil && !w.conn.IsClosed() {
		return w.conn, nil
	}
	w.conn = nil
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := pc.Hijack()
	// The append statements are the same every time but for their
	// values: plan them once. The server's default keeps re-planning
	// statements whose custom plans look cheaper, which for the
	// multi-row insert costs as much as running it.
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("set up a writer connection: %w", err)
	}
	w.conn = conn
	return conn, nil
}

// close closes the writer's connection, if open.
func (w *esWriter) close(ctx context.Context) {
	if w.conn != nil {
		_ = w.conn.Close(ctx)
		w.conn = nil
	}
}
