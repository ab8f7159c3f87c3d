package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// EventColumns are the columns of a streams table that every dialect
// reads, in the order its scan function takes them, after any columns of
// its own (PostgreSQL's tx).
const EventColumns = `seq, aggregate, aggregate_id, tenant, version, stream_id, command_id, request_id, owner_id, header, create_time, events`

// ScanFunc scans one row of a dialect's stream columns into r.
type ScanFunc func(rows Rows, r *ScannedRow) error

// EventReads are the reads of one bounded context's streams table that
// are the same on every dialect: an aggregate's streams, a request's
// stream, the aggregate IDs. The log, whose order each database keeps its
// own way, is the backend's.
type EventReads struct {
	d       *Dialect
	context string
	read    Executor
	scan    ScanFunc

	// The statements, for tests of their plans.
	LoadSQL, LoadByTimeSQL, LookupSQL, RequestExistsSQL, ScanSQL string
}

// NewEventReads returns the reads of boundedContext's table (quoted)
// through read; columns is what they select (EventColumns, after the
// dialect's own), scan how a row of them is read.
func NewEventReads(d *Dialect, boundedContext, table, columns string, read Executor, scan ScanFunc) *EventReads {
	p := d.Param
	from := ` FROM ` + table + ` WHERE aggregate = ` + p(1) + ` AND aggregate_id = ` + p(2)
	return &EventReads{d: d, context: boundedContext, read: read, scan: scan,
		LoadSQL:       `SELECT ` + columns + from + ` AND version BETWEEN ` + p(3) + ` AND ` + p(4) + ` ORDER BY version`,
		LoadByTimeSQL: `SELECT ` + columns + from + ` AND create_time >= ` + p(3) + ` AND create_time < ` + p(4) + ` ORDER BY version`,
		// A request is found only in its aggregate's own tenant: to any
		// other, the answer is the one for a request never made.
		LookupSQL:        `SELECT ` + columns + from + ` AND request_id = ` + p(3) + ` AND tenant = ` + p(4),
		RequestExistsSQL: `SELECT EXISTS (SELECT 1` + from + ` AND request_id = ` + p(3) + ` AND tenant = ` + p(4) + `)`,
		ScanSQL: `SELECT aggregate_id, tenant FROM ` + table +
			` WHERE aggregate = ` + p(1) + ` AND version = 1 AND aggregate_id > ` + p(2) + ` ORDER BY aggregate_id LIMIT ` + p(3),
	}
}

// Context returns the bounded context the store serves.
func (s *EventReads) Context() string { return s.context }

// Query runs a read returning streams.
func (s *EventReads) Query(ctx context.Context, q string, args ...any) ([]factum.EventStream, error) {
	rows, err := s.read.Query(ctx, q, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	out := []factum.EventStream{}
	var r ScannedRow
	for rows.Next() {
		if err := rowsCancelled(ctx, len(out)); err != nil {
			return nil, err
		}
		r.Header = nil
		if err := s.scan(rows, &r); err != nil {
			return nil, s.wrap(err)
		}
		st, err := DecodeStream(s.d, s.context, &r)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err)
	}
	return out, nil
}

// Load implements eventstore.Backend.
func (s *EventReads) Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error) {
	return s.Query(ctx, s.LoadSQL, id.Aggregate, id.ID, int32(from), int32(to))
}

// LoadByTime implements eventstore.TimeLoader. Create times are stored to
// the microsecond, and the bounds are compared at that precision.
func (s *EventReads) LoadByTime(ctx context.Context, id factum.AggregateID, start, end time.Time) ([]factum.EventStream, error) {
	return s.Query(ctx, s.LoadByTimeSQL, id.Aggregate, id.ID, s.d.Time(start), s.d.Time(end))
}

// HasRequest implements eventstore.RequestProber.
func (s *EventReads) HasRequest(ctx context.Context, id factum.AggregateID, requestID string) (bool, error) {
	var ok bool
	if err := s.read.QueryRow(ctx, s.RequestExistsSQL, id.Aggregate, id.ID, requestID, id.TenantOrDefault()).Scan(&ok); err != nil {
		return false, s.wrap(err)
	}
	return ok, nil
}

// FindRequest implements eventstore.RequestFinder.
func (s *EventReads) FindRequest(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, bool, error) {
	got, err := s.Query(ctx, s.LookupSQL, id.Aggregate, id.ID, requestID, id.TenantOrDefault())
	if err != nil || len(got) == 0 {
		return factum.EventStream{}, false, err
	}
	return got[0], true, nil
}

// ScanAggregateIDs implements eventstore.AggregateScanner. IDs are
// compared in byte order.
func (s *EventReads) ScanAggregateIDs(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error) {
	rows, err := s.read.Query(ctx, s.ScanSQL, named.Aggregate, afterID, limit)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	ids := []factum.AggregateID{}
	for rows.Next() {
		if err := rowsCancelled(ctx, len(ids)); err != nil {
			return nil, err
		}
		id := factum.AggregateID{NamedAggregate: named}
		if err := rows.Scan(&id.ID, &id.Tenant); err != nil {
			return nil, s.wrap(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err)
	}
	return ids, nil
}

// rowsCancelled returns ctx's error, looked at every 256 rows of a read
// that has taken n: a cached read runs without watching its context (see
// StdDBCached), and a load or scan has no row limit of its own.
// Snapshots' scans use it too.
func rowsCancelled(ctx context.Context, n int) error {
	if n%256 == 255 {
		return ctx.Err()
	}
	return nil
}

// wrap names the backend and the context in a read's error.
func (s *EventReads) wrap(err error) error {
	return fmt.Errorf("%s: event store %s: %w", s.d.Name, s.context, err)
}

var (
	_ eventstore.RequestFinder    = (*EventReads)(nil)
	_ eventstore.RequestProber    = (*EventReads)(nil)
	_ eventstore.TimeLoader       = (*EventReads)(nil)
	_ eventstore.AggregateScanner = (*EventReads)(nil)
)

// SeqArg converts a log sequence to the databases' signed 64-bit integer,
// saturating: their keys never exceed the largest int64.
func SeqArg(seq uint64) int64 {
	if seq > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(seq)
}
