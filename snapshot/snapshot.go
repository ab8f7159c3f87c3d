package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// Snapshot is an aggregate's state at one version, with who changed it and
// when. With the All strategy the latest snapshot of every aggregate is
// saved, so the snapshot store doubles as the current-state query store.
//
// Times are kept to the millisecond (stores truncate them), because the
// query language compares times as epoch milliseconds.
type Snapshot struct {
	// AggregateID identifies the aggregate, tenant included.
	AggregateID factum.AggregateID
	// OwnerID is the aggregate's owner, if any.
	OwnerID string
	// Version is the aggregate version the state is at (>= 1).
	Version int
	// EventID is the ID of the last event applied to the state.
	EventID string
	// FirstOperator is who sent the command that created the aggregate.
	FirstOperator string
	// Operator is who sent the command of the last event applied.
	Operator string
	// FirstEventTime is when the aggregate's first event was made.
	FirstEventTime time.Time
	// EventTime is when the last event applied was made.
	EventTime time.Time
	// SnapshotTime is when this snapshot was made.
	SnapshotTime time.Time
	// Deleted reports whether the aggregate is deleted.
	Deleted bool
	// State is the aggregate state as JSON.
	State json.RawMessage
}

// Length bounds of the text fields, so every backend can store them.
const (
	// MaxOperatorLen bounds OwnerID, FirstOperator and Operator.
	MaxOperatorLen = 256
)

// Validate reports an IllegalArgument error for a snapshot no store
// accepts: an invalid aggregate ID, a version below 1, a state that is not
// JSON, oversized text fields.
func (s *Snapshot) Validate() error {
	if err := s.validateFields(); err != nil {
		return err
	}
	if len(s.State) == 0 || !json.Valid(s.State) {
		return factum.IllegalArgument(fmt.Sprintf("snapshot of %s: state is not valid JSON", s.AggregateID))
	}
	return nil
}

// ValidateFields is Validate without the check that the state is JSON,
// for a state whose encoder is known to make JSON (encoding/json's).
func (s *Snapshot) ValidateFields() error { return s.validateFields() }

// validateFields makes the checks of Validate but the state's JSON.
func (s *Snapshot) validateFields() error {
	if err := s.AggregateID.Validate(); err != nil {
		return err
	}
	if s.Version < 1 {
		return factum.IllegalArgument(fmt.Sprintf("snapshot of %s: version %d, want at least 1", s.AggregateID, s.Version))
	}
	if len(s.EventID) > factum.MaxIDLen {
		return factum.IllegalArgument(fmt.Sprintf("snapshot of %s: event ID longer than %d bytes", s.AggregateID, factum.MaxIDLen))
	}
	for _, f := range [...]struct{ what, v string }{{"owner ID", s.OwnerID}, {"first operator", s.FirstOperator}, {"operator", s.Operator}} {
		if len(f.v) > MaxOperatorLen {
			return factum.IllegalArgument(fmt.Sprintf("snapshot of %s: %s longer than %d bytes", s.AggregateID, f.what, MaxOperatorLen))
		}
	}
	return nil
}

// Normalized returns a copy of s as a store keeps it: the tenant made
// explicit, times truncated to the millisecond in UTC, and State copied so
// that the caller's buffer can be reused.
func (s Snapshot) Normalized() Snapshot {
	s.normalize()
	s.State = bytes.Clone(s.State)
	return s
}

// normalize makes the tenant explicit and truncates the times to the
// millisecond in UTC, in place; State stays the caller's.
func (s *Snapshot) normalize() {
	s.AggregateID.Tenant = s.AggregateID.TenantOrDefault()
	s.FirstEventTime = millis(s.FirstEventTime)
	s.EventTime = millis(s.EventTime)
	s.SnapshotTime = millis(s.SnapshotTime)
}

func millis(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

// toMillis returns t as epoch milliseconds; the zero time is 0.
func toMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMillis is the inverse of toMillis.
func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// wire is the JSON form of a snapshot: its document plus the two type
// names.
type wire struct {
	ContextName    string          `json:"contextName,omitempty"`
	AggregateName  string          `json:"aggregateName,omitempty"`
	AggregateID    string          `json:"aggregateId"`
	TenantID       string          `json:"tenantId"`
	OwnerID        string          `json:"ownerId"`
	Version        int             `json:"version"`
	EventID        string          `json:"eventId"`
	FirstOperator  string          `json:"firstOperator"`
	Operator       string          `json:"operator"`
	FirstEventTime int64           `json:"firstEventTime"`
	EventTime      int64           `json:"eventTime"`
	SnapshotTime   int64           `json:"snapshotTime"`
	Deleted        bool            `json:"deleted"`
	State          json.RawMessage `json:"state"`
}

// MarshalJSON encodes the snapshot as its document (see Document) with
// "contextName" and "aggregateName" added.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	state := s.State
	if len(state) == 0 {
		state = json.RawMessage("null")
	}
	return json.Marshal(wire{
		ContextName:    s.AggregateID.Context,
		AggregateName:  s.AggregateID.Aggregate,
		AggregateID:    s.AggregateID.ID,
		TenantID:       s.AggregateID.TenantOrDefault(),
		OwnerID:        s.OwnerID,
		Version:        s.Version,
		EventID:        s.EventID,
		FirstOperator:  s.FirstOperator,
		Operator:       s.Operator,
		FirstEventTime: toMillis(s.FirstEventTime),
		EventTime:      toMillis(s.EventTime),
		SnapshotTime:   toMillis(s.SnapshotTime),
		Deleted:        s.Deleted,
		State:          state,
	})
}

// UnmarshalJSON decodes the form MarshalJSON writes. Missing members stay
// zero; the state is kept byte for byte.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*s = Snapshot{
		AggregateID: factum.AggregateID{
			NamedAggregate: factum.NamedAggregate{Context: w.ContextName, Aggregate: w.AggregateName},
			ID:             w.AggregateID,
			Tenant:         w.TenantID,
		},
		OwnerID:        w.OwnerID,
		Version:        w.Version,
		EventID:        w.EventID,
		FirstOperator:  w.FirstOperator,
		Operator:       w.Operator,
		FirstEventTime: fromMillis(w.FirstEventTime),
		EventTime:      fromMillis(w.EventTime),
		SnapshotTime:   fromMillis(w.SnapshotTime),
		Deleted:        w.Deleted,
		State:          bytes.Clone(w.State),
	}
	return nil
}

// Document returns the snapshot as the document queries see: an object
// with "aggregateId", "tenantId", "ownerId", "version", "eventId",
// "firstOperator", "operator", "firstEventTime", "eventTime",
// "snapshotTime" (epoch milliseconds; 0 for a zero time), "deleted" and
// "state". The type names are not in it: a query runs over one aggregate
// type. Numbers in the state are json.Number, so that re-encoding the
// document reproduces them exactly. It fails only if State is not JSON.
func (s *Snapshot) Document() (query.Document, error) {
	return s.document(true)
}

// document builds the query document; exact keeps numbers as json.Number
// (for output), otherwise they are float64 (for evaluation).
func (s *Snapshot) document(exact bool) (query.Document, error) {
	var state any
	if len(s.State) > 0 {
		dec := json.NewDecoder(bytes.NewReader(s.State))
		if exact {
			dec.UseNumber()
		}
		if err := dec.Decode(&state); err != nil {
			return nil, factum.Errorf(factum.CodeIllegalArgument, "snapshot of %s: state is not valid JSON: %w", s.AggregateID, err)
		}
	}
	num := func(n int64) any {
		if exact {
			return json.Number(fmt.Sprint(n))
		}
		return float64(n)
	}
	return query.Document{
		"aggregateId":    s.AggregateID.ID,
		"tenantId":       s.AggregateID.TenantOrDefault(),
		"ownerId":        s.OwnerID,
		"version":        num(int64(s.Version)),
		"eventId":        s.EventID,
		"firstOperator":  s.FirstOperator,
		"operator":       s.Operator,
		"firstEventTime": num(toMillis(s.FirstEventTime)),
		"eventTime":      num(toMillis(s.EventTime)),
		"snapshotTime":   num(toMillis(s.SnapshotTime)),
		"deleted":        s.Deleted,
		"state":          state,
	}, nil
}

// FromDocument returns the snapshot of the aggregate type that a document
// (or a projection of one) describes; fields the document lacks stay zero.
func FromDocument(named factum.NamedAggregate, doc query.Document) (Snapshot, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return Snapshot{}, factum.Errorf(factum.CodeIllegalArgument, "snapshot document does not encode: %w", err)
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return Snapshot{}, factum.Errorf(factum.CodeIllegalArgument, "snapshot document is malformed: %w", err)
	}
	s.AggregateID.NamedAggregate = named
	return s, nil
}
