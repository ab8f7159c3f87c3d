package factum

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// DomainEvent is one fact inside an event stream.
type DomainEvent struct {
	// ID identifies the event (a UUIDv7). Consumers de-duplicate by it.
	ID string `json:"id"`
	// Name is the event type name (snake_case by default).
	Name string `json:"name"`
	// Revision is the schema revision of Body, for upcasting; 0 is the first.
	Revision int `json:"revision,omitempty"`
	// Sequence is the 1-based position of the event in its stream.
	Sequence int `json:"sequence"`
	// IsLast marks the last event of its stream.
	IsLast bool `json:"isLast,omitempty"`
	// Body is the event value as JSON.
	Body json.RawMessage `json:"body"`
}

// Position is a place in a store's global log. Positions are totally ordered
// by (Tx, Seq). Tx groups positions by commit order where a backend's commit
// order differs from its sequence order (PostgreSQL's transaction IDs); it is
// zero on backends that commit in sequence order. The zero Position is
// before every stream.
type Position struct {
	// Tx is the commit-order group (zero where not needed).
	Tx uint64 `json:"tx,omitempty"`
	// Seq is the sequence number inside the log.
	Seq uint64 `json:"seq"`
}

// Less reports whether p comes before q in the log.
func (p Position) Less(q Position) bool {
	return p.Tx < q.Tx || p.Tx == q.Tx && p.Seq < q.Seq
}

// IsZero reports whether p is the start of the log.
func (p Position) IsZero() bool { return p == Position{} }

// String formats p as "tx:seq".
func (p Position) String() string { return fmt.Sprintf("%d:%d", p.Tx, p.Seq) }

// ParsePosition parses the form String returns.
func ParsePosition(s string) (Position, error) {
	var p Position
	if _, err := fmt.Sscanf(s, "%d:%d", &p.Tx, &p.Seq); err != nil {
		return Position{}, IllegalArgument(fmt.Sprintf("log position %q: want tx:seq", s))
	}
	if s != p.String() {
		return Position{}, IllegalArgument(fmt.Sprintf("log position %q: want tx:seq", s))
	}
	return p, nil
}

// EventStream is the outcome of one command on one aggregate: its events,
// appended atomically as the aggregate's next version.
type EventStream struct {
	// ID identifies the stream (a UUIDv7).
	ID string `json:"id"`
	// AggregateID is the aggregate the stream belongs to.
	AggregateID AggregateID `json:"aggregateId"`
	// Version is the aggregate version after this stream: 1, 2, 3 ... with
	// no gaps, one per command.
	Version int `json:"version"`
	// CommandID is the command that produced the stream.
	CommandID string `json:"commandId"`
	// RequestID is that command's request ID; unique per aggregate.
	RequestID string `json:"requestId"`
	// OwnerID is the user on whose behalf the command ran, if any.
	OwnerID string `json:"ownerId,omitempty"`
	// Header is carried from the command.
	Header map[string]string `json:"header,omitempty"`
	// CreateTime is when the stream was made.
	CreateTime time.Time `json:"createTime"`
	// Events are the stream's events, in order; at least one.
	Events []DomainEvent `json:"events"`
	// Position is the stream's place in the global log, set by the store on
	// append.
	Position Position `json:"position,omitzero"`
}

// Validate checks what every store refuses before writing: identities,
// version >= 1, at least one event, event names and sequences 1..n with
// IsLast on the last. It returns IllegalArgument errors.
func (s *EventStream) Validate() error {
	if err := s.AggregateID.Validate(); err != nil {
		return err
	}
	if err := ValidateID("stream id", s.ID); err != nil {
		return err
	}
	if err := ValidateID("command id", s.CommandID); err != nil {
		return err
	}
	if err := ValidateID("request id", s.RequestID); err != nil {
		return err
	}
	if s.Version < 1 {
		return IllegalArgument(fmt.Sprintf("stream version %d: versions start at 1", s.Version))
	}
	if len(s.Events) == 0 {
		return IllegalArgument("stream has no events")
	}
	for i, e := range s.Events {
		if err := ValidateID("event id", e.ID); err != nil {
			return err
		}
		if err := ValidateName("event", e.Name); err != nil {
			return err
		}
		if e.Sequence != i+1 {
			return IllegalArgument(fmt.Sprintf("event %d has sequence %d, want %d", i, e.Sequence, i+1))
		}
		if e.IsLast != (i == len(s.Events)-1) {
			return IllegalArgument(fmt.Sprintf("event %d: IsLast must be set on the last event only", i))
		}
		if e.Revision < 0 {
			return IllegalArgument(fmt.Sprintf("event %d has negative revision", i))
		}
		if len(e.Body) == 0 || !json.Valid(e.Body) || !utf8.Valid(e.Body) {
			return IllegalArgument(fmt.Sprintf("event %d (%s): body is not valid UTF-8 JSON", i, e.Name))
		}
	}
	return nil
}
