package sqlite

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/eventsjson"
)

// esRow is an event stream flattened into the columns of the streams table.
// The bounded context is not stored: the table belongs to one context.
type esRow struct {
	aggregate, aggregateID, tenant        string
	version                               int
	streamID, commandID, requestID, owner string
	header                                []byte // JSON object; nil for none
	createTime                            int64  // Unix microseconds
	events                                []byte // JSON array of factum.DomainEvent
}

// esEncode flattens a validated stream. It refuses, as IllegalArgument,
// what the SQL backends cannot store as given: text that is not UTF-8
// (PostgreSQL refuses it; SQLite refuses it too, so that both answer
// alike) and create times outside the years 1 to 9999.
func esEncode(s *factum.EventStream) (esRow, error) {
	if y := s.CreateTime.Year(); y < 1 || y > 9999 {
		return esRow{}, factum.IllegalArgument(fmt.Sprintf("create time %v: want a year from 1 to 9999", s.CreateTime))
	}
	if !utf8.ValidString(s.OwnerID) {
		return esRow{}, factum.IllegalArgument("owner id is not valid UTF-8")
	}
	r := esRow{
		aggregate:   s.AggregateID.Aggregate,
		aggregateID: s.AggregateID.ID,
		tenant:      s.AggregateID.TenantOrDefault(),
		version:     s.Version,
		streamID:    s.ID,
		commandID:   s.CommandID,
		requestID:   s.RequestID,
		owner:       s.OwnerID,
		createTime:  s.CreateTime.UnixMicro(),
	}
	if len(s.Header) > 0 {
		for _, k := range slices.Sorted(maps.Keys(s.Header)) {
			if !utf8.ValidString(k) || !utf8.ValidString(s.Header[k]) {
				return esRow{}, factum.IllegalArgument(fmt.Sprintf("header %q is not valid UTF-8", k))
			}
		}
		h, err := json.Marshal(s.Header)
		if err != nil {
			return esRow{}, factum.Errorf(factum.CodeIllegalArgument, "header: %w", err)
		}
		r.header = h
	}
	ev, err := eventsjson.Append(nil, s.Events)
	if err != nil {
		return esRow{}, err
	}
	r.events = ev
	return r, nil
}

// args returns the row as the insert statement's arguments. STRICT TEXT
// columns take strings, not byte slices (which bind as BLOBs).
func (r *esRow) args() []any {
	var header any
	if r.header != nil {
		header = string(r.header)
	}
	return []any{r.aggregate, r.aggregateID, r.tenant, r.version, r.streamID,
		r.commandID, r.requestID, r.owner, header, r.createTime, string(r.events)}
}

// esDecode rebuilds a stream from its row.
func esDecode(context string, seq int64, r *esRow) (factum.EventStream, error) {
	s := factum.EventStream{
		ID: r.streamID,
		AggregateID: factum.AggregateID{
			NamedAggregate: factum.NamedAggregate{Context: context, Aggregate: r.aggregate},
			ID:             r.aggregateID,
			Tenant:         r.tenant,
		},
		Version:    r.version,
		CommandID:  r.commandID,
		RequestID:  r.requestID,
		OwnerID:    r.owner,
		CreateTime: time.UnixMicro(r.createTime).UTC(),
		Position:   factum.Position{Seq: uint64(seq)},
	}
	if len(r.header) > 0 {
		if err := json.Unmarshal(r.header, &s.Header); err != nil {
			return factum.EventStream{}, fmt.Errorf("sqlite: stream %s: decode header: %w", r.streamID, err)
		}
	}
	events, err := eventsjson.Decode(r.events)
	if err != nil {
		return factum.EventStream{}, fmt.Errorf("sqlite: stream %s: decode events: %w", r.streamID, err)
	}
	s.Events = events
	return s, nil
}
