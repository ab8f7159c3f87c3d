package aggregate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
)

// StoredState is an aggregate's state as it travels and is stored outside
// the executor: the envelope with the domain state as JSON. It is the shape
// of a snapshot.
type StoredState struct {
	// ID is the aggregate, with the tenant it was created in.
	ID factum.AggregateID `json:"aggregateId"`
	// Version is the version of the last stream applied (0: none).
	Version int `json:"version"`
	// OwnerID is the owner recorded by the creating stream.
	OwnerID string `json:"ownerId,omitempty"`
	// Deleted marks a deleted aggregate.
	Deleted bool `json:"deleted,omitempty"`
	// EventTime is the creation time of the last stream applied.
	EventTime time.Time `json:"eventTime,omitzero"`
	// State is the domain state as JSON; empty means the initial state.
	State json.RawMessage `json:"state,omitempty"`
}

// SnapshotSource gives the executor an aggregate's latest saved state, so
// that loading an aggregate that is not cached reads only the streams after
// it. The snapshot store implements it; a nil SnapshotSource means every
// load starts from version 1.
type SnapshotSource interface {
	// LatestState returns the aggregate's latest saved state, or ok false
	// when there is none. It must not return a state newer than the event
	// store's history.
	LatestState(ctx context.Context, id factum.AggregateID) (st StoredState, ok bool, err error)
}

// StateObserver sees each state an executor reaches by an append, encoded
// as it is stored, right after the append succeeded: the state the
// appended stream leads to. The runtime's snapshotter uses it to save that
// state without decoding and applying the stream again. ObserveState is
// called on the executor's lane: it must be quick and must not block.
//
// The state comes from applying the events as the handler returned them,
// not as they read back from the store; the two agree for events that
// survive a JSON round trip, which sourcing requires anyway, and for
// handlers that change the state only through events: a command handler
// gets the state by value, but maps, slices and pointers in it are the
// cached state's own, and writing to them (even in a command then
// rejected) would change the cached state, and now the snapshots too,
// without an event.
type StateObserver interface {
	ObserveState(st StoredState)
}

// FromStored decodes a stored state into the typed envelope.
func (d *Definition[S]) FromStored(s StoredState) (State[S], error) {
	st := State[S]{ID: s.ID, Version: s.Version, OwnerID: s.OwnerID, Deleted: s.Deleted, EventTime: s.EventTime, Value: d.NewState()}
	if len(s.State) > 0 {
		if err := json.Unmarshal(s.State, &st.Value); err != nil {
			return st, factum.Errorf(factum.CodeInternalServerError, "aggregate %s: stored state at version %d does not decode: %w", d.named, s.Version, err)
		}
	}
	return st, nil
}

// ToStored encodes the typed envelope.
func (d *Definition[S]) ToStored(st State[S]) (StoredState, error) {
	b, err := json.Marshal(st.Value)
	if err != nil {
		return StoredState{}, factum.Errorf(factum.CodeInternalServerError, "aggregate %s: state does not encode: %w", d.named, err)
	}
	return StoredState{ID: st.ID, Version: st.Version, OwnerID: st.OwnerID, Deleted: st.Deleted, EventTime: st.EventTime, State: b}, nil
}

// Fold implements Type: it applies streams, in version order and each the
// next version, to from.
func (d *Definition[S]) Fold(reg *codec.Registry, from StoredState, streams []factum.EventStream) (StoredState, error) {
	next, _, err := d.FoldTyped(reg, from, Typed{}, streams)
	return next, err
}

// Typed is an aggregate's state in its domain type, as FoldTyped returns
// it, for a caller that folds the same aggregate again: handing it back
// saves decoding the stored state. The zero Typed holds nothing.
type Typed struct {
	st any // *State[S] of the type that made it
}

// FoldTyped is Fold for a caller that folds one aggregate stream after
// stream, as the snapshotter does: it also returns the new state in its
// domain type, to hand back with the next call so that the stored state
// need not be decoded again. It folds onto typed when typed holds the
// state of from's aggregate at from's version, and decodes from.State
// otherwise. The typed state is changed in place and returned: the typed
// passed in must not be used again, whatever the outcome.
func (d *Definition[S]) FoldTyped(reg *codec.Registry, from StoredState, typed Typed, streams []factum.EventStream) (StoredState, Typed, error) {
	st, ok := typed.st.(*State[S])
	if !ok || st.Version != from.Version || st.ID != from.ID {
		decoded, err := d.FromStored(from)
		if err != nil {
			return from, Typed{}, err
		}
		st = &decoded
	}
	for i := range streams {
		if err := d.Source(reg, st, &streams[i]); err != nil {
			return from, Typed{}, fmt.Errorf("fold: %w", err)
		}
	}
	next, err := d.ToStored(*st)
	if err != nil {
		return from, Typed{}, err
	}
	return next, Typed{st}, nil
}
