package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

const esColumns = `seq, aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events`

func esBuildQueries(table string) esQueries {
	from := ` FROM ` + table + ` WHERE aggregate = ? AND aggregate_id = ?`
	return esQueries{
		load:       `SELECT ` + esColumns + from + ` AND version BETWEEN ? AND ? ORDER BY version`,
		loadByTime: `SELECT ` + esColumns + from + ` AND create_time >= ? AND create_time < ? ORDER BY version`,
		// A request is found only in its aggregate's own tenant: to any
		// other, the answer is the one for a request never made.
		lookup:        `SELECT ` + esColumns + from + ` AND request_id = ? AND tenant = ?`,
		requestExists: `SELECT EXISTS (SELECT 1` + from + ` AND request_id = ? AND tenant = ?)`,
		scan: `SELECT aggregate_id, tenant FROM ` + table +
			` WHERE aggregate = ? AND version = 1 AND aggregate_id > ? ORDER BY aggregate_id LIMIT ?`,
		readLog:     `SELECT ` + esColumns + ` FROM ` + table + ` WHERE seq > ? ORDER BY seq LIMIT ?`,
		logHasAfter: `SELECT EXISTS (SELECT 1 FROM ` + table + ` WHERE seq > ?)`,
	}
}

// query runs a read returning streams.
func (s *EventStore) query(ctx context.Context, q string, args ...any) ([]factum.EventStream, error) {
	rows, err := s.db.Reader().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: event store %s: %w", s.context, err)
	}
	defer rows.Close()
	out := []factum.EventStream{}
	var (
		r      esRow
		seq    int64
		header []byte
	)
	for rows.Next() {
		header = nil
		if err := rows.Scan(&seq, &r.aggregate, &r.aggregateID, &r.tenant, &r.version, &r.streamID,
			&r.commandID, &r.requestID, &r.owner, &header, &r.createTime, &r.events); err != nil {
			return nil, fmt.Errorf("sqlite: event store %s: %w", s.context, err)
		}
		r.header = header
		st, err := esDecode(s.context, seq, &r)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: event store %s: %w", s.context, err)
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
	return s.query(ctx, s.q.load, id.Aggregate, id.ID, from, to)
}

// LoadByTime implements eventstore.Store. Create times are stored to the
// microsecond, and the bounds are compared at that precision.
func (s *EventStore) LoadByTime(ctx context.Context, id factum.AggregateID, start, end time.Time) ([]factum.EventStream, error) {
	if end.Before(start) {
		return nil, factum.IllegalArgument(fmt.Sprintf("time range [%v, %v): end is before start", start, end))
	}
	if err := s.checkContext(id.Context); err != nil {
		return nil, err
	}
	return s.query(ctx, s.q.loadByTime, id.Aggregate, id.ID, start.UnixMicro(), end.UnixMicro())
}

// RequestExists implements eventstore.Store.
func (s *EventStore) RequestExists(ctx context.Context, id factum.AggregateID, requestID string) (bool, error) {
	if err := s.checkContext(id.Context); err != nil {
		return false, err
	}
	var ok bool
	if err := s.db.Reader().QueryRowContext(ctx, s.q.requestExists, id.Aggregate, id.ID, requestID, id.TenantOrDefault()).Scan(&ok); err != nil {
		return false, fmt.Errorf("sqlite: event store %s: %w", s.context, err)
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

// ScanAggregateIDs implements eventstore.Store.
func (s *EventStore) ScanAggregateIDs(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error) {
	if err := eventstore.CheckLimit(limit); err != nil {
		return nil, err
	}
	if err := s.checkContext(named.Context); err != nil {
		return nil, err
	}
	rows, err := s.db.Reader().QueryContext(ctx, s.q.scan, named.Aggregate, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: event store %s: %w", s.context, err)
	}
	defer rows.Close()
	ids := []factum.AggregateID{}
	for rows.Next() {
		id := factum.AggregateID{NamedAggregate: named}
		if err := rows.Scan(&id.ID, &id.Tenant); err != nil {
			return nil, fmt.Errorf("sqlite: event store %s: %w", s.context, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: event store %s: %w", s.context, err)
	}
	return ids, nil
}

// ReadLog implements eventstore.Store. Positions are the table's
// AUTOINCREMENT key, handed out in commit order (see EventStore), so
// reading in key order never skips a stream. A position with a non-zero Tx
// (from another backend) sorts after every stream here.
func (s *EventStore) ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error) {
	if err := eventstore.CheckLimit(limit); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if after.Tx > 0 {
		return []factum.EventStream{}, nil
	}
	return s.query(ctx, s.q.readLog, esSeqArg(after.Seq), limit)
}

// WaitLog implements eventstore.Store. It wakes at once for appends through
// this store and polls every PollInterval for appends by other processes.
// It returns nil only when the log holds a stream after position after.
func (s *EventStore) WaitLog(ctx context.Context, after factum.Position) error {
	for {
		woken := s.waitChan()
		if after.Tx == 0 {
			if s.lastSeq.Load() > after.Seq {
				return nil
			}
			var ok bool
			err := s.db.Reader().QueryRowContext(ctx, s.q.logHasAfter, esSeqArg(after.Seq)).Scan(&ok)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("sqlite: event store %s: %w", s.context, err)
			}
			if ok {
				return nil
			}
		}
		t := time.NewTimer(s.poll)
		select {
		case <-woken:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
}

// esSeqArg converts a log sequence to SQLite's signed integer, saturating:
// SQLite keys never exceed the largest int64.
func esSeqArg(seq uint64) int64 {
	if seq > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(seq)
}
