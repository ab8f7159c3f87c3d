package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// esQueries holds the store's statements, built once for its table.
type esQueries struct {
	inserts                                                map[int]esInsertStmts // by batch size
	sizes                                                  []int                 // the keys of inserts, ascending
	classify, notify                                       string
	load, loadByTime, lookup, requestExists, scan, readLog string
	logState                                               string
}

// esHorizon is the oldest transaction still running: every row of a lower
// transaction ID is final, and every row committed from now on has a
// transaction ID at or above it.
const esHorizon = `pg_snapshot_xmin(pg_current_snapshot())`

const esColumns = `tx, seq, aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events`

// esInsertStmts are the insert statements for one batch size.
type esInsertStmts struct{ plain, orSkip string }

func esBuildQueries(table string, maxBatch int) esQueries {
	from := ` FROM ` + table + ` WHERE aggregate = $1 AND aggregate_id = $2`
	after := `(tx, seq) > ($1::xid8, $2::bigint)`
	q := esQueries{
		inserts:    map[int]esInsertStmts{},
		sizes:      esBatchSizes(maxBatch),
		classify:   esClassifySQL(table),
		notify:     `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')`,
		load:       `SELECT ` + esColumns + from + ` AND version BETWEEN $3 AND $4 ORDER BY version`,
		loadByTime: `SELECT ` + esColumns + from + ` AND create_time >= $3 AND create_time < $4 ORDER BY version`,
		// A request is found only in its aggregate's own tenant: to any
		// other, the answer is the one for a request never made.
		lookup:        `SELECT ` + esColumns + from + ` AND request_id = $3 AND tenant = $4`,
		requestExists: `SELECT EXISTS (SELECT 1` + from + ` AND request_id = $3 AND tenant = $4)`,
		scan: `SELECT aggregate_id, tenant FROM ` + table +
			` WHERE aggregate = $1 AND version = 1 AND aggregate_id > $2 ORDER BY aggregate_id LIMIT $3`,
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
	for _, n := range q.sizes {
		q.inserts[n] = esInsertStmts{plain: esInsertSQL(table, false, n), orSkip: esInsertSQL(table, true, n)}
	}
	return q
}

// query runs a read returning streams.
func (s *EventStore) query(ctx context.Context, q string, args ...any) ([]factum.EventStream, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: event store %s: %w", s.context, err)
	}
	defer rows.Close()
	out := []factum.EventStream{}
	var r esScanned
	for rows.Next() {
		r.header = nil
		if err := rows.Scan(&r.tx, &r.seq, &r.aggregate, &r.aggregateID, &r.tenant, &r.version, &r.streamID,
			&r.commandID, &r.requestID, &r.owner, &r.header, &r.createTime, &r.events); err != nil {
			return nil, fmt.Errorf("postgres: event store %s: %w", s.context, err)
		}
		st, err := esDecode(s.context, &r)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: event store %s: %w", s.context, err)
	}
	return out, nil
}

// Load implements eventstore.Store.
func (s *EventStore) Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error) {
	if err := eventstore.CheckRange(from, to); err != nil {
		return nil, err
	}
	if err := s.checkContext(id.Context); err != nil {
		return nil, err
	}
	return s.query(ctx, s.q.load, id.Aggregate, id.ID, int32(from), int32(min(to, eventstore.MaxVersion)))
}

// LoadByTime implements eventstore.Store. Create times are stored to the
// microsecond (timestamptz), and the bounds are compared at that precision.
func (s *EventStore) LoadByTime(ctx context.Context, id factum.AggregateID, start, end time.Time) ([]factum.EventStream, error) {
	if end.Before(start) {
		return nil, factum.IllegalArgument(fmt.Sprintf("time range [%v, %v): end is before start", start, end))
	}
	if err := s.checkContext(id.Context); err != nil {
		return nil, err
	}
	return s.query(ctx, s.q.loadByTime, id.Aggregate, id.ID, start, end)
}

// RequestExists implements eventstore.Store.
func (s *EventStore) RequestExists(ctx context.Context, id factum.AggregateID, requestID string) (bool, error) {
	if err := s.checkContext(id.Context); err != nil {
		return false, err
	}
	var ok bool
	if err := s.pool.QueryRow(ctx, s.q.requestExists, id.Aggregate, id.ID, requestID, id.TenantOrDefault()).Scan(&ok); err != nil {
		return false, fmt.Errorf("postgres: event store %s: %w", s.context, err)
	}
	return ok, nil
}

// Lookup implements eventstore.Store.
func (s *EventStore) Lookup(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, error) {
	if err := s.checkContext(id.Context); err != nil {
		return factum.EventStream{}, err
	}
	got, err := s.query(ctx, s.q.lookup, id.Aggregate, id.ID, requestID, id.TenantOrDefault())
	if err != nil {
		return factum.EventStream{}, err
	}
	if len(got) == 0 {
		return factum.EventStream{}, eventstore.NotFoundRequest(id, requestID)
	}
	return got[0], nil
}

// ScanAggregateIDs implements eventstore.Store. IDs are compared in byte
// order (the columns use the "C" collation).
func (s *EventStore) ScanAggregateIDs(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error) {
	if err := eventstore.CheckLimit(limit); err != nil {
		return nil, err
	}
	if err := s.checkContext(named.Context); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q.scan, named.Aggregate, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: event store %s: %w", s.context, err)
	}
	defer rows.Close()
	ids := []factum.AggregateID{}
	for rows.Next() {
		id := factum.AggregateID{NamedAggregate: named}
		if err := rows.Scan(&id.ID, &id.Tenant); err != nil {
			return nil, fmt.Errorf("postgres: event store %s: %w", s.context, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: event store %s: %w", s.context, err)
	}
	return ids, nil
}

// ReadLog implements eventstore.Store. It returns streams in (Tx, Seq)
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
func (s *EventStore) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	if err := eventstore.CheckLimit(limit); err != nil {
		return nil, err
	}
	own, _ := s.own()
	deadline := time.Now().Add(s.opts.ReadOwnAppendsWait)
	delay := time.Millisecond
	for {
		page, err := s.query(ctx, s.q.readLog, after.Tx, esSeqArg(after.Seq), limit)
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

// esSeqArg converts a log sequence to PostgreSQL's bigint, saturating:
// sequence values never exceed the largest bigint.
func esSeqArg(seq uint64) int64 {
	if seq > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(seq)
}
