package httpapi

import (
	"encoding/json"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/snapshot"
)

// TimeFormat is the one time format of the HTTP API's state documents:
// RFC 3339 in UTC with milliseconds, the precision every store keeps.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Timestamp is a time written as TimeFormat. The zero Timestamp is left out
// of documents (omitzero).
type Timestamp struct{ time.Time }

// MarshalJSON writes the time in UTC as TimeFormat.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.UTC().Format(TimeFormat))
}

// UnmarshalJSON reads RFC 3339, with or without a fraction.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// AggregateState is the one shape of an aggregate's state in the HTTP API:
// GET …/state, GET and PUT …/snapshot and the snapshot queries (without
// /state) all answer it, with the identity nested as in every other body
// and times as TimeFormat. Fields a source does not know (a folded state
// has no snapshot time, a projection leaves fields out) are omitted.
type AggregateState struct {
	// AggregateID is the aggregate, with the tenant it was created in.
	AggregateID factum.AggregateID `json:"aggregateId"`
	// Version is the version of the last stream applied.
	Version int `json:"version"`
	// OwnerID is the owner recorded by the creating stream.
	OwnerID string `json:"ownerId,omitempty"`
	// Deleted marks a deleted aggregate.
	Deleted bool `json:"deleted"`
	// EventID is the ID of the last event applied (snapshots only).
	EventID string `json:"eventId,omitempty"`
	// FirstOperator is who sent the creating command (snapshots only).
	FirstOperator string `json:"firstOperator,omitempty"`
	// Operator is who sent the command of the last event applied
	// (snapshots only).
	Operator string `json:"operator,omitempty"`
	// FirstEventTime is when the first event was made (snapshots only).
	FirstEventTime Timestamp `json:"firstEventTime,omitzero"`
	// EventTime is when the last stream applied was made.
	EventTime Timestamp `json:"eventTime,omitzero"`
	// SnapshotTime is when the snapshot was saved (snapshots only).
	SnapshotTime Timestamp `json:"snapshotTime,omitzero"`
	// State is the domain state; null for the initial state.
	State json.RawMessage `json:"state"`
}

// stateOfStored is the document of a folded state.
func stateOfStored(s aggregate.StoredState) AggregateState {
	return AggregateState{
		AggregateID: withTenant(s.ID), Version: s.Version, OwnerID: s.OwnerID, Deleted: s.Deleted,
		EventTime: stamp(s.EventTime), State: orNull(s.State),
	}
}

// stateOfSnapshot is the document of a saved snapshot.
func stateOfSnapshot(s snapshot.Snapshot) AggregateState {
	return AggregateState{
		AggregateID: withTenant(s.AggregateID), Version: s.Version, OwnerID: s.OwnerID, Deleted: s.Deleted,
		EventID: s.EventID, FirstOperator: s.FirstOperator, Operator: s.Operator,
		FirstEventTime: stamp(s.FirstEventTime), EventTime: stamp(s.EventTime), SnapshotTime: stamp(s.SnapshotTime),
		State: orNull(s.State),
	}
}

func statesOfSnapshots(snaps []snapshot.Snapshot) []AggregateState {
	out := make([]AggregateState, len(snaps))
	for i, s := range snaps {
		out[i] = stateOfSnapshot(s)
	}
	return out
}

func withTenant(id factum.AggregateID) factum.AggregateID {
	id.Tenant = id.TenantOrDefault()
	return id
}

// stamp truncates to the millisecond, the precision of TimeFormat, so a
// folded state and its snapshot show the same time.
func stamp(t time.Time) Timestamp {
	if t.IsZero() {
		return Timestamp{}
	}
	return Timestamp{t.Truncate(time.Millisecond)}
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}
