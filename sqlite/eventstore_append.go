package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/sqlstore"
)

// esResult is the writer's answer to one request.
type esResult = sqlstore.AppendResult

// esRequest is one Append waiting for the writer.
type esRequest = sqlstore.AppendRequest

func esInsertSQL(table string) string {
	// The predecessor rule (version 1, or version - 1 exists in the same
	// tenant) is the table's BEFORE INSERT trigger (migration 0002), which
	// drops a row that breaks it. The unique indexes refuse a taken
	// version or request ID; ON CONFLICT DO NOTHING turns that refusal
	// too into "no row inserted", classified afterwards under the same
	// write lock. The position is the row's rowid (seq is the INTEGER
	// PRIMARY KEY), which the statement's result carries: no RETURNING,
	// whose rows cost a query's machinery on every append.
	return `INSERT INTO ` + table + ` (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
ON CONFLICT DO NOTHING`
}

// esInsert runs the insert statement stmt for row and returns the
// position it stored the row at, or ok false when it stored none. An error
// is the statement's own.
func esInsert(ctx context.Context, stmt *sql.Stmt, row *esRow) (pos factum.Position, ok bool, err error) {
	var n, seq int64
	res, err := stmt.ExecContext(ctx, esArgs(row)...)
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err == nil && n > 0 {
		seq, err = res.LastInsertId()
	}
	if err != nil {
		return factum.Position{}, false, fmt.Errorf("insert: %w", err)
	}
	return factum.Position{Seq: uint64(seq)}, n > 0, nil
}

func esClassifySQL(table string) string {
	return `SELECT
	(SELECT tenant FROM ` + table + ` WHERE aggregate = ?1 AND aggregate_id = ?2 AND version = 1),
	EXISTS (SELECT 1 FROM ` + table + ` WHERE aggregate = ?1 AND aggregate_id = ?2 AND request_id = ?3)`
}

// flush writes one batch. Requests whose callers have gone are dropped
// unwritten; the transaction is cancelled only when every caller in it has
// gone, so that one caller's cancellation cannot fail the others.
func (s *EventStore) flush(batch []*esRequest) {
	live := sqlstore.Live(batch)
	if len(live) == 0 {
		return
	}
	ctx, release := sqlstore.WriteContext(live)
	defer release()

	results, err := s.write(ctx, live)
	if err != nil && len(live) > 1 && results.inStatement {
		// A statement failed for a reason other than a conflict (conflicts
		// are not errors here), and the transaction is rolled back. Write
		// each request on its own, so that one request the database
		// refuses cannot fail the others.
		for _, r := range live {
			s.flush([]*esRequest{r})
		}
		return
	}
	s.stats.Batches.Add(1)
	for i, r := range live {
		// A conflict may have been read from a row written earlier in
		// the same, now rolled back, transaction (another append batch
		// shares it), so after an error no outcome stands: every request
		// fails, retryable, and is classified again when retried.
		res := esResult{Outcome: eventstore.Failed, Err: err}
		if err == nil {
			res = results.out[i]
		}
		if res.Outcome == eventstore.Appended {
			s.stats.Streams.Add(1)
			esStoreMax(&s.lastSeq, res.Pos.Seq)
		}
		r.Done <- res
	}
}

// esWrite is the outcome of one write transaction.
type esWrite struct {
	out         []esResult
	inStatement bool // the error, if any, came from a request's statement
}

// write writes every request of batch in one transaction of the DB's
// batcher, shared with the other writes queued beside it (snapshot saves,
// checkpoints), so that they all pay one commit. A request alone, with no
// batch to join, is first written by its one statement in autocommit mode
// (BEGIN and COMMIT cost as much again); only if it is refused is it tried
// again inside a transaction, so that it is classified under the write
// lock that refused it.
func (s *EventStore) write(ctx context.Context, batch []*esRequest) (esWrite, error) {
	w := esWrite{out: make([]esResult, len(batch))}
	if len(batch) == 1 && s.db.batch.idle() {
		pos, ok, err := esInsert(ctx, s.insert, &batch[0].Row)
		if err != nil {
			w.inStatement = true
			return w, err
		}
		if ok {
			s.autocommits.Add(1)
			w.out[0] = esResult{Outcome: eventstore.Appended, Pos: pos}
			return w, nil
		}
	}
	err := s.db.batch.do(&batchWrite{ctx: ctx, apply: func(ctx context.Context, tx *sql.Tx) error {
		// Run again, alone, when another write of the batch failed: the
		// outcomes are those of this run.
		clear(w.out)
		w.inStatement = false
		insert, classify := tx.StmtContext(ctx, s.insert), tx.StmtContext(ctx, s.classify)
		for i, r := range batch {
			row := &r.Row
			pos, ok, err := esInsert(ctx, insert, row)
			if err != nil {
				w.inStatement = true
				return err
			}
			if ok {
				w.out[i] = esResult{Outcome: eventstore.Appended, Pos: pos}
				continue
			}
			o, err := s.classifyRow(ctx, classify, row)
			if err != nil {
				w.inStatement = true
				return err
			}
			w.out[i].Outcome = o
		}
		return nil
	}})
	return w, err
}

// classifyRow says why row did not go in, reading inside the transaction
// that tried it: the write lock is still held, so what it reads is what
// refused the row. The order of the checks is the contract's precedence.
func (s *EventStore) classifyRow(ctx context.Context, stmt *sql.Stmt, row *esRow) (eventstore.Outcome, error) {
	var tenant sql.NullString
	var dupRequest bool
	if err := stmt.QueryRowContext(ctx, row.Aggregate, row.AggregateID, row.RequestID).Scan(&tenant, &dupRequest); err != nil {
		return eventstore.Failed, fmt.Errorf("classify: %w", err)
	}
	var stored *string
	if tenant.Valid {
		stored = &tenant.String
	}
	if o := sqlstore.Refusal(row, stored, dupRequest, false, false); o != eventstore.Failed {
		return o, nil
	}
	// A creating row refused although the aggregate does not exist: no
	// rule of the contract explains it.
	return eventstore.Failed, fmt.Errorf("classify: %s/%s version 1 refused although the aggregate does not exist", row.Aggregate, row.AggregateID)
}

// esStoreMax raises v to x if x is higher.
func esStoreMax(v *atomic.Uint64, x uint64) {
	for {
		cur := v.Load()
		if x <= cur || v.CompareAndSwap(cur, x) {
			return
		}
	}
}
