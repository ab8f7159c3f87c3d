package postgres

import (
	"context"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/sqlstore"
)

// esQueries holds the store's statements, built once for its table.
type esQueries struct {
	insert           esInsertStmts
	classify, notify string
	group            string
	readLog          string
	logState         string
}

// esHorizon is the oldest transaction still running: every row of a lower
// transaction ID is final, and every row committed from now on has a
// transaction ID at or above it.
const esHorizon = `pg_snapshot_xmin(pg_current_snapshot())`

// esInsertStmts are the append statements (see esInsertSQL).
type esInsertStmts struct{ plain, orSkip, one string }

func esBuildQueries(table string) esQueries {
	after := `(tx, seq) > ($1::xid8, $2::bigint)`
	q := esQueries{
		insert:   esInserts(table),
		classify: esClassifySQL(table),
		group:    esGroupSQL(table),
		notify:   `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')`,
		readLog: `SELECT ` + esColumns + ` FROM ` + table + ` WHERE ` + after +
			` AND tx < ` + esHorizon + ` ORDER BY tx, seq LIMIT $3`,
		// Whether the log holds a committed stream after the position
		// (a row), and whether it is readable (its value). The first stream
		// after the position has the lowest tx of all that follow, so if it
		// is not below the horizon none is. One probe of the log index at
		// the position: EXISTS subqueries here were planned as scans of the
		// whole table once it held a few hundred thousand streams.
		logState: `SELECT tx < ` + esHorizon + ` FROM ` + table + ` WHERE ` + after + ` ORDER BY tx, seq LIMIT 1`,
	}
	return q
}

// ReadLog implements eventstore.Backend. It returns streams in (Tx, Seq)
// order and only those below the horizon (see EventStore): a stream of a
// transaction still running, or of one younger than a transaction still
// running, is left for a later read, so that reading on from the last
// position returned never skips a stream.
//
// A process expects to find its own appends in the log: when this store
// has appended a stream after position after that is not readable yet
// (an older transaction, anywhere on the server, is still running), and
// the page is not full, ReadLog waits up to
// EventStoreOptions.ReadOwnAppendsWait for it to become readable.
func (s *esLog) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	own := (*EventStore)(s).own()
	deadline := time.Now().Add(s.opts.ReadOwnAppendsWait)
	delay := time.Millisecond
	for {
		page, err := s.reads.Query(ctx, s.q.readLog, after.Tx, sqlstore.SeqArg(after.Seq), limit)
		if err != nil {
			return nil, err
		}
		reached := after
		if len(page) > 0 {
			reached = page[len(page)-1].Position
		}
		if len(page) == limit || !reached.Less(own) || !time.Now().Add(delay).Before(deadline) {
			return page, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}
