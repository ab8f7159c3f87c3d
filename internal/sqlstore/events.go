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

// AggregateReads are the reads of eventstore.Store that EventReads
// implements, for a backend's store to embed.
type AggregateReads interface {
	Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error)
	LoadByTime(ctx context.Context, id factum.AggregateID, start, end time.Time) ([]factum.EventStream, error)
	RequestExists(ctx context.Context, id factum.AggregateID, requestID string) (bool, error)
	Lookup(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, error)
	ScanAggregateIDs(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error)
}

var _ AggregateReads = (*EventReads)(nil)

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

// CheckContext refuses identities of another bounded context: the store's
// tables hold one context only.
func (s *EventReads) CheckContext(context string) error {
	if context != s.context {
		return factum.IllegalArgument(fmt.Sprintf("%s: the event store of context %q cannot serve context %q", s.d.Name, s.context, context))
	}
	return nil
}

// Context returns the bounded context the store serves.
func (s *EventReads) Context() string { return s.context }

// Query runs a read returning streams.
func (s *EventReads) Query(ctx context.Context, q string, args ...any) ([]factum.EventStream, error) {
	rows, err := s.read.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: event store %s: %w", s.d.Name, s.context, err)
	}
	defer rows.Close()
	out := []factum.EventStream{}
	var r ScannedRow
	for rows.Next() {
		r.Header = nil
		if err := s.scan(rows, &r); err != nil {
			return nil, fmt.Errorf("%s: event store %s: %w", s.d.Name, s.context, err)
		}
		st, err := DecodeStream(s.d, s.context, &r)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: event store %s: %w", s.d.Name, s.context, err)
	}
	return out, nil
}

// Load implements eventstore.Store.
func (s *EventReads) Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error) {
	if err := eventstore.CheckRange(from, to); err != nil {
		return nil, err
	}
	if err := s.CheckContext(id.Context); err != nil {
		return nil, err
	}
	return s.Query(ctx, s.LoadSQL, id.Aggregate, id.ID, int32(from), int32(min(to, eventstore.MaxVersion)))
}

// LoadByTime implements eventstore.Store. Create times are stored to the
// microsecond, and the bounds are compared at that precision.
func (s *EventReads) LoadByTime(ctx context.Context, id factum.AggregateID, start, end time.Time) ([]factum.EventStream, error) {
	if end.Before(start) {
		return nil, factum.IllegalArgument(fmt.Sprintf("time range [%v, %v): end is before start", start, end))
	}
	if err := s.CheckContext(id.Context); err != nil {
		return nil, err
	}
	return s.Query(ctx, s.LoadByTimeSQL, id.Aggregate, id.ID, s.d.Time(start), s.d.Time(end))
}

// RequestExists implements eventstore.Store.
func (s *EventReads) RequestExists(ctx context.Context, id factum.AggregateID, requestID string) (bool, error) {
	if err := s.CheckContext(id.Context); err != nil {
		return false, err
	}
	var ok bool
	if err := s.read.QueryRow(ctx, s.RequestExistsSQL, id.Aggregate, id.ID, requestID, id.TenantOrDefault()).Scan(&ok); err != nil {
		return false, fmt.Errorf("%s: event store %s: %w", s.d.Name, s.context, err)
	}
	return ok, nil
}

// Lookup implements eventstore.Store.
func (s *EventReads) Lookup(ctx context.Context, id factum.AggregateID, requestID string) (factum.EventStream, error) {
	if err := s.CheckContext(id.Context); err != nil {
		return factum.EventStream{}, err
	}
	got, err := s.Query(ctx, s.LookupSQL, id.Aggregate, id.ID, requestID, id.TenantOrDefault())
	if err != nil {
		return factum.EventStream{}, err
	}
	if len(got) == 0 {
		return factum.EventStream{}, eventstore.NotFoundRequest(id, requestID)
	}
	return got[0], nil
}

// ScanAggregateIDs implements eventstore.Store. IDs are compared in byte
// order.
func (s *EventReads) ScanAggregateIDs(ctx context.Context, named factum.NamedAggregate, afterID string, limit int) ([]factum.AggregateID, error) {
	if err := eventstore.CheckLimit(limit); err != nil {
		return nil, err
	}
	if err := s.CheckContext(named.Context); err != nil {
		return nil, err
	}
	rows, err := s.read.Query(ctx, s.ScanSQL, named.Aggregate, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("%s: event store %s: %w", s.d.Name, s.context, err)
	}
	defer rows.Close()
	ids := []factum.AggregateID{}
	for rows.Next() {
		id := factum.AggregateID{NamedAggregate: named}
		if err := rows.Scan(&id.ID, &id.Tenant); err != nil {
			return nil, fmt.Errorf("%s: event store %s: %w", s.d.Name, s.context, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: event store %s: %w", s.d.Name, s.context, err)
	}
	return ids, nil
}

// SeqArg converts a log sequence to the databases' signed 64-bit integer,
// saturating: their keys never exceed the largest int64.
func SeqArg(seq uint64) int64 {
	if seq > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(seq)
}
