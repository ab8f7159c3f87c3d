package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// esInsertSQL is the append statement. Its WHERE carries the predecessor
// rule: version 1, or version - 1 exists in the same tenant; the unique
// indexes refuse a taken version or request ID. A row the WHERE filters
// out does not come back from RETURNING and is classified afterwards.
//
// The plain statement fails as a whole on a unique violation. Conflicts are
// the exception, and ON CONFLICT costs every row a speculative insertion
// (index pre-checks and an extra WAL record), so the store runs the plain
// statement first and, only when a batch of several rows hits a unique
// violation, again with onConflict set: ON CONFLICT DO NOTHING then skips
// the refused rows and inserts the others.
//
// The OR keeps the EXISTS a per-row filter, so rows are inserted in array
// order, sorted by aggregate: concurrent statements take index locks in
// the same order and cannot deadlock each other.
func esInsertSQL(table string, onConflict bool) string {
	q := `INSERT INTO ` + table + ` (aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
SELECT r.aggregate, r.aggregate_id, r.tenant, r.version, r.stream_id, r.command_id, r.request_id, r.owner_id,
	NULLIF(r.header, '')::json, r.create_time, r.events::json
FROM unnest($1::text[], $2::text[], $3::text[], $4::int4[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::text[])
	AS r(aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events)
WHERE r.version = 1 OR EXISTS (SELECT 1 FROM ` + table + ` p
	WHERE p.aggregate = r.aggregate AND p.aggregate_id = r.aggregate_id AND p.version = r.version - 1 AND p.tenant = r.tenant)
`
	if onConflict {
		q += "ON CONFLICT DO NOTHING\n"
	}
	return q + `RETURNING aggregate, aggregate_id, tx, seq`
}

func esClassifySQL(table string) string {
	same := `p.aggregate = r.aggregate AND p.aggregate_id = r.aggregate_id`
	return `SELECT r.i,
	(SELECT p.tenant FROM ` + table + ` p WHERE ` + same + ` AND p.version = 1),
	EXISTS (SELECT 1 FROM ` + table + ` p WHERE ` + same + ` AND p.request_id = r.request_id),
	EXISTS (SELECT 1 FROM ` + table + ` p WHERE ` + same + ` AND p.version = r.version),
	EXISTS (SELECT 1 FROM ` + table + ` p WHERE ` + same + ` AND p.version = r.version - 1)
FROM unnest($1::text[], $2::text[], $3::text[], $4::int4[]) WITH ORDINALITY AS r(aggregate, aggregate_id, request_id, version, i)`
}

// write runs the batch's insert and classifies the rows that did not go
// in. out[i] answers batch[i]; an esFailed outcome with no error means
// "unexplained, write again".
func (s *EventStore) write(ctx context.Context, batch []*esRequest) ([]esResult, error) {
	out := make([]esResult, len(batch))
	err := s.withConn(ctx, func(ctx context.Context, conn *pgxpool.Conn) error {
		var a esBatchArgs
		a.fill(batch)
		inserted, err := s.insert(ctx, conn, s.q.insert, batch, &a, out)
		if s.conflict(err) {
			// Nothing was inserted. One row alone is classified at once;
			// a batch is written again, skipping the refused rows.
			clear(inserted)
			err = nil
			if len(batch) > 1 {
				inserted, err = s.insert(ctx, conn, s.q.insertOrSkip, batch, &a, out)
			}
		}
		if err != nil {
			return err
		}
		var missing []int
		for i, ok := range inserted {
			if !ok {
				missing = append(missing, i)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		return s.classify(ctx, conn, batch, missing, out)
	})
	return out, err
}

// insert runs one insert statement and records the rows it returned in out.
func (s *EventStore) insert(ctx context.Context, conn *pgxpool.Conn, q string, batch []*esRequest, a *esBatchArgs, out []esResult) ([]bool, error) {
	inserted := make([]bool, len(batch))
	rows, err := conn.Query(ctx, q, a.aggregate, a.aggregateID, a.tenant, a.version,
		a.streamID, a.commandID, a.requestID, a.owner, a.header, a.createTime, a.events)
	if err != nil {
		return inserted, err
	}
	defer rows.Close()
	index := make(map[esAggregateKey]int, len(batch))
	for i, r := range batch {
		index[r.row.key()] = i
	}
	var (
		agg, id string
		tx      uint64
		seq     int64
	)
	for rows.Next() {
		if err := rows.Scan(&agg, &id, &tx, &seq); err != nil {
			return inserted, err
		}
		i, ok := index[esAggregateKey{agg, id}]
		if !ok {
			return inserted, fmt.Errorf("insert returned a row for %s/%s, which is not in the batch", agg, id)
		}
		inserted[i] = true
		out[i] = esResult{outcome: esAppended, pos: factum.Position{Tx: tx, Seq: uint64(seq)}}
	}
	return inserted, rows.Err()
}

// conflict reports whether err is a unique violation of one of the two
// indexes of the append contract, known by the constraint name the server
// reports. A unique violation of any other constraint is not a conflict of
// the contract and stays an error.
func (s *EventStore) conflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" &&
		(pgErr.ConstraintName == s.versionIndex || pgErr.ConstraintName == s.requestIndex)
}

// classify says why the rows batch[missing] did not go in. It reads after
// the insert ended, in a new snapshot, so it sees the committed rows that
// refused them: a unique index makes an insert wait for a conflicting
// transaction to end before it fails (or, with ON CONFLICT, skips). The
// order of the checks is the contract's precedence.
func (s *EventStore) classify(ctx context.Context, conn *pgxpool.Conn, batch []*esRequest, missing []int, out []esResult) error {
	agg, id, req := make([]string, len(missing)), make([]string, len(missing)), make([]string, len(missing))
	ver := make([]int32, len(missing))
	for j, i := range missing {
		r := &batch[i].row
		agg[j], id[j], req[j], ver[j] = r.aggregate, r.aggregateID, r.requestID, int32(r.version)
	}
	rows, err := conn.Query(ctx, s.q.classify, agg, id, req, ver)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			j                       int64
			tenant                  *string
			dupRequest, taken, pred bool
		)
		if err := rows.Scan(&j, &tenant, &dupRequest, &taken, &pred); err != nil {
			return err
		}
		i := missing[j-1]
		row := &batch[i].row
		o := esFailed // unexplained: the predecessor committed after the insert's snapshot
		switch {
		case tenant != nil && *tenant != row.tenant:
			o = esTenantMismatch
		case dupRequest:
			o = esDuplicateRequest
		case row.version == 1 && tenant != nil:
			o = esDuplicateAggregate
		case taken || row.version > 1 && !pred:
			o = esVersionConflict
		}
		out[i] = esResult{outcome: o}
	}
	return rows.Err()
}

// esBatchArgs holds a batch column by column, for unnest.
type esBatchArgs struct {
	aggregate, aggregateID, tenant, streamID, commandID, requestID, owner, header, events []string
	version                                                                               []int32
	createTime                                                                            []time.Time
}

func (a *esBatchArgs) fill(batch []*esRequest) {
	n := len(batch)
	a.aggregate, a.aggregateID, a.tenant = make([]string, n), make([]string, n), make([]string, n)
	a.streamID, a.commandID, a.requestID = make([]string, n), make([]string, n), make([]string, n)
	a.owner, a.header, a.events = make([]string, n), make([]string, n), make([]string, n)
	a.version, a.createTime = make([]int32, n), make([]time.Time, n)
	for i, req := range batch {
		r := &req.row
		a.aggregate[i], a.aggregateID[i], a.tenant[i] = r.aggregate, r.aggregateID, r.tenant
		a.streamID[i], a.commandID[i], a.requestID[i] = r.streamID, r.commandID, r.requestID
		a.owner[i], a.header[i], a.events[i] = r.owner, r.header, r.events
		a.version[i], a.createTime[i] = int32(r.version), r.createTime
	}
}

// withConn runs fn on a pool connection under ctx. When ctx ends, pgx
// closes the connection after sending the server a cancel request, so the
// statement is aborted on the server, not only abandoned by the client
// (TestEventStoreCancelCancelsTheStatement checks it).
func (s *EventStore) withConn(ctx context.Context, fn func(context.Context, *pgxpool.Conn) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	return fn(ctx, conn)
}
