package sqlite

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
)

// esQueries holds the log's statements, built once for the table.
type esQueries struct {
	readLog, logHasAfter string
}

func esBuildQueries(table string) esQueries {
	return esQueries{
		readLog:     `SELECT ` + sqlstore.EventColumns + ` FROM ` + table + ` WHERE seq > ? ORDER BY seq LIMIT ?`,
		logHasAfter: `SELECT EXISTS (SELECT 1 FROM ` + table + ` WHERE seq > ?)`,
	}
}

// ReadLog implements eventstore.Backend. Positions are the table's
// AUTOINCREMENT key, handed out in commit order (see EventStore), so
// reading in key order never skips a stream. A position with a non-zero Tx
// (from another backend) sorts after every stream here.
func (s *esLog) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	if after.Tx > 0 {
		return []factum.EventStream{}, nil
	}
	return s.reads.Query(ctx, s.q.readLog, sqlstore.SeqArg(after.Seq), limit)
}

// WaitLog implements eventstore.LogWaiter. Appends through this store
// close woken; it polls every PollInterval for appends by other processes.
func (s *esLog) WaitLog(ctx context.Context, after factum.Position, woken <-chan struct{}) error {
	for {
		if after.Tx == 0 {
			if s.lastSeq.Load() > after.Seq {
				return nil
			}
			var ok bool
			err := s.db.reads().QueryRow(ctx, s.q.logHasAfter, sqlstore.SeqArg(after.Seq)).Scan(&ok)
			if err != nil {
				return sqlstore.LogError(ctx, &dialect, s.context, err)
			}
			if ok {
				return nil
			}
		}
		if err := sqlstore.Pause(ctx, s.poll, woken, nil); err != nil {
			return err
		}
		select {
		case <-woken:
			return nil // an append through the store: the caller reads on
		default:
		}
	}
}
