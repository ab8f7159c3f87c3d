package postgres

import (
	"context"
	"fmt"
	"time"

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
	used time.Time // when conn last served a statement
	cols esBatchColumns
}

// esWriterIdleCheck is how long a writer's connection may sit unused
// before it is pinged ahead of its next statement. A connection whose
// server process ended while it was idle (a restart, a failover, an idle
// timeout, pg_terminate_backend) shows it only when next used: without the
// ping, the batch that uses it would fail, with every append in it. The
// pool does the same for its own connections.
const esWriterIdleCheck = time.Second

// connect returns the writer's connection, opening it if needed.
func (w *esWriter) connect(ctx context.Context, s *EventStore) (*pgx.Conn, error) {
	if w.conn != nil && !w.conn.IsClosed() && time.Since(w.used) > esWriterIdleCheck {
		if err := w.conn.Ping(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			w.close(context.Background())
		}
	}
	if w.conn != nil && !w.conn.IsClosed() {
		w.used = time.Now()
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
	w.conn, w.used = conn, time.Now()
	return conn, nil
}

// close closes the writer's connection, if open.
func (w *esWriter) close(ctx context.Context) {
	if w.conn != nil {
		_ = w.conn.Close(ctx)
		w.conn = nil
	}
}
