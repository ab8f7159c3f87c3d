package sqlstore

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/eventsjson"
)

// EventRow is an event stream flattened into the columns of a streams
// table, as an append binds it. The bounded context is not stored: the
// table belongs to one context.
type EventRow struct {
	Aggregate, AggregateID, Tenant        string
	Version                               int
	StreamID, CommandID, RequestID, Owner string
	Header                                string // JSON object; "" for none
	CreateTime                            time.Time
	Events                                string // JSON array of factum.DomainEvent
}

// AggregateKey identifies an aggregate inside one table.
type AggregateKey struct{ Aggregate, ID string }

// Key returns the row's aggregate.
func (r *EventRow) Key() AggregateKey { return AggregateKey{r.Aggregate, r.AggregateID} }

// Compare orders rows by aggregate.
func (r *EventRow) Compare(o *EventRow) int {
	if c := strings.Compare(r.Aggregate, o.Aggregate); c != 0 {
		return c
	}
	return strings.Compare(r.AggregateID, o.AggregateID)
}

// EncodeStream flattens a validated stream. It refuses, as
// IllegalArgument, what the SQL backends cannot store as given: text
// d.CheckText refuses and create times outside the years 1 to 9999; both
// backends answer alike, before the row reaches a statement shared with
// other appends.
func EncodeStream(d *Dialect, s *factum.EventStream) (EventRow, error) {
	if y := s.CreateTime.Year(); y < 1 || y > 9999 {
		return EventRow{}, factum.IllegalArgument(fmt.Sprintf("create time %v: want a year from 1 to 9999", s.CreateTime))
	}
	if err := d.CheckText("owner id", s.OwnerID); err != nil {
		return EventRow{}, err
	}
	r := EventRow{
		Aggregate:   s.AggregateID.Aggregate,
		AggregateID: s.AggregateID.ID,
		Tenant:      s.AggregateID.TenantOrDefault(),
		Version:     s.Version,
		StreamID:    s.ID,
		CommandID:   s.CommandID,
		RequestID:   s.RequestID,
		Owner:       s.OwnerID,
		CreateTime:  s.CreateTime,
	}
	if len(s.Header) > 0 {
		for _, k := range slices.Sorted(maps.Keys(s.Header)) {
			// NULs are fine here: JSON writes them as \u0000.
			if !utf8.ValidString(k) || !utf8.ValidString(s.Header[k]) {
				return EventRow{}, factum.IllegalArgument(fmt.Sprintf("header %q is not valid UTF-8", k))
			}
		}
		h, err := json.Marshal(s.Header)
		if err != nil {
			return EventRow{}, factum.Errorf(factum.CodeIllegalArgument, "header: %w", err)
		}
		r.Header = string(h)
	}
	ev, err := eventsjson.Append(make([]byte, 0, 256), s.Events)
	if err != nil {
		return EventRow{}, err
	}
	r.Events = string(ev)
	return r, nil
}

// ScannedRow is one row of a streams table as read.
type ScannedRow struct {
	Tx                                    uint64
	Seq                                   int64
	Aggregate, AggregateID, Tenant        string
	Version                               int
	StreamID, CommandID, RequestID, Owner string
	Header, Events                        []byte
	CreateTime                            time.Time
	// CreateMicros is where a dialect storing create times as Unix
	// microseconds scans them, before it sets CreateTime.
	CreateMicros int64
}

// DecodeStream rebuilds a stream of boundedContext from its row.
func DecodeStream(d *Dialect, boundedContext string, r *ScannedRow) (factum.EventStream, error) {
	s := factum.EventStream{
		ID: r.StreamID,
		AggregateID: factum.AggregateID{
			NamedAggregate: factum.NamedAggregate{Context: boundedContext, Aggregate: r.Aggregate},
			ID:             r.AggregateID,
			Tenant:         r.Tenant,
		},
		Version:    r.Version,
		CommandID:  r.CommandID,
		RequestID:  r.RequestID,
		OwnerID:    r.Owner,
		CreateTime: r.CreateTime.UTC(),
		Position:   factum.Position{Tx: r.Tx, Seq: uint64(r.Seq)},
	}
	if len(r.Header) > 0 {
		if err := json.Unmarshal(r.Header, &s.Header); err != nil {
			return factum.EventStream{}, fmt.Errorf("%s: stream %s: decode header: %w", d.Name, r.StreamID, err)
		}
	}
	events, err := eventsjson.Decode(r.Events)
	if err != nil {
		return factum.EventStream{}, fmt.Errorf("%s: stream %s: decode events: %w", d.Name, r.StreamID, err)
	}
	s.Events = events
	return s, nil
}

// FromMicros is the time of Unix microseconds, in UTC.
func FromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// Refusal says why row did not go in, from what the database held when it
// refused it: tenant, the tenant of the aggregate's first stream (nil for
// none); whether the request ID is taken; whether the version is taken;
// whether the predecessor is there. The order of the checks is the
// contract's precedence. Failed means no rule of the contract explains it.
func Refusal(row *EventRow, tenant *string, dupRequest, taken, pred bool) eventstore.Outcome {
	switch {
	case tenant != nil && *tenant != row.Tenant:
		return eventstore.RefusedTenant
	case dupRequest:
		return eventstore.RefusedRequest
	case row.Version == 1 && tenant != nil:
		return eventstore.RefusedAggregate
	case taken || row.Version > 1 && !pred:
		// The predecessor is missing (or in another tenant, ruled out
		// above) or the version is taken: either way not last + 1.
		return eventstore.RefusedVersion
	}
	return eventstore.Failed
}
