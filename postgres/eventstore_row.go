package postgres

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
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
	header                                string // JSON object; "" for none
	createTime                            time.Time
	events                                string // JSON array of factum.DomainEvent
}

// esAggregateKey identifies an aggregate inside one batch.
type esAggregateKey struct{ aggregate, id string }

func (r *esRow) key() esAggregateKey { return esAggregateKey{r.aggregate, r.aggregateID} }

// appendArgs appends the row's parameters of esInsertSQL to args.
func (r *esRow) appendArgs(args []any) []any {
	return append(args, r.aggregate, r.aggregateID, r.tenant, int32(r.version), r.streamID,
		r.commandID, r.requestID, r.owner, r.header, r.createTime, r.events)
}

// compare orders rows by aggregate, the order statements insert them in.
func (r *esRow) compare(o *esRow) int {
	if c := strings.Compare(r.aggregate, o.aggregate); c != 0 {
		return c
	}
	return strings.Compare(r.aggregateID, o.aggregateID)
}

// esEncode flattens a validated stream. It refuses, as IllegalArgument,
// what PostgreSQL cannot store as given (text that is not UTF-8 or holds
// NUL bytes, create times outside the years 1 to 9999) before it reaches a
// statement shared with other appends.
func esEncode(s *factum.EventStream) (esRow, error) {
	if y := s.CreateTime.Year(); y < 1 || y > 9999 {
		return esRow{}, factum.IllegalArgument(fmt.Sprintf("create time %v: want a year from 1 to 9999", s.CreateTime))
	}
	if err := esCheckText("owner id", s.OwnerID); err != nil {
		return esRow{}, err
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
		createTime:  s.CreateTime,
	}
	if len(s.Header) > 0 {
		for _, k := range slices.Sorted(maps.Keys(s.Header)) {
			if !utf8.ValidString(k) || !utf8.ValidString(s.Header[k]) {
				return esRow{}, factum.IllegalArgument(fmt.Sprintf("header %q is not valid UTF-8", k))
			}
		}
		h, err := json.Marshal(s.Header) // NULs become \u0000, which json holds
		if err != nil {
			return esRow{}, factum.Errorf(factum.CodeIllegalArgument, "header: %w", err)
		}
		r.header = string(h)
	}
	ev, err := eventsjson.Append(make([]byte, 0, 256), s.Events)
	if err != nil {
		return esRow{}, err
	}
	r.events = string(ev)
	return r, nil
}

// esCheckText refuses strings a PostgreSQL text column cannot store.
func esCheckText(what, s string) error {
	if !utf8.ValidString(s) {
		return factum.IllegalArgument(what + " is not valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return factum.IllegalArgument(what + " holds a NUL byte")
	}
	return nil
}

// esScanned holds one row as read.
type esScanned struct {
	tx                                    uint64
	seq                                   int64
	aggregate, aggregateID, tenant        string
	version                               int32
	streamID, commandID, requestID, owner string
	header, events                        []byte
	createTime                            time.Time
}

// esDecode rebuilds a stream from its row.
func esDecode(context string, r *esScanned) (factum.EventStream, error) {
	s := factum.EventStream{
		ID: r.streamID,
		AggregateID: factum.AggregateID{
			NamedAggregate: factum.NamedAggregate{Context: context, Aggregate: r.aggregate},
			ID:             r.aggregateID,
			Tenant:         r.tenant,
		},
		Version:    int(r.version),
		CommandID:  r.commandID,
		RequestID:  r.requestID,
		OwnerID:    r.owner,
		CreateTime: r.createTime.UTC(),
		Position:   factum.Position{Tx: r.tx, Seq: uint64(r.seq)},
	}
	if len(r.header) > 0 {
		if err := json.Unmarshal(r.header, &s.Header); err != nil {
			return factum.EventStream{}, fmt.Errorf("postgres: stream %s: decode header: %w", r.streamID, err)
		}
	}
	events, err := eventsjson.Decode(r.events)
	if err != nil {
		return factum.EventStream{}, fmt.Errorf("postgres: stream %s: decode events: %w", r.streamID, err)
	}
	s.Events = events
	return s, nil
}
