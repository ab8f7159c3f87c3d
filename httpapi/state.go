package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/eventstore"
)

// getState serves GET /{aggregate}/{id}/state: the current state.
func (h *Handler) getState(w http.ResponseWriter, r *http.Request) {
	h.serveState(w, r, eventstore.MaxVersion)
}

// getStateAtVersion serves GET /{aggregate}/{id}/state/{version}.
func (h *Handler) getStateAtVersion(w http.ResponseWriter, r *http.Request) {
	v, err := parseVersion("version", r.PathValue("version"))
	if err != nil {
		writeError(w, err)
		return
	}
	h.serveState(w, r, v)
}

// getStateAtTime serves GET /{aggregate}/{id}/state/time/{time}: the state
// after every stream created at or before the time, given as RFC 3339 or
// as Unix milliseconds.
func (h *Handler) getStateAtTime(w http.ResponseWriter, r *http.Request) {
	at, err := parseTime(r.PathValue("time"))
	if err != nil {
		writeError(w, err)
		return
	}
	t, id, err := h.aggregateID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	// LoadByTime's end is exclusive and stores keep microseconds: one
	// microsecond past the time includes streams created at it.
	streams, err := h.rt.Store().LoadByTime(r.Context(), id, time.Time{}, at.Add(time.Microsecond))
	if err != nil {
		writeError(w, err)
		return
	}
	if err := h.checkLoaded(r.Context(), id, streams); err != nil {
		writeError(w, err)
		return
	}
	if len(streams) == 0 {
		writeError(w, factum.NotFound(fmt.Sprintf("aggregate %s did not exist at %s", id, at.Format(time.RFC3339Nano))))
		return
	}
	last := 0
	for i := range streams {
		last = max(last, streams[i].Version)
	}
	st, err := h.fold(r.Context(), t, id, last)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, stateOfStored(st))
}

// serveState folds the aggregate up to version upTo and writes it.
func (h *Handler) serveState(w http.ResponseWriter, r *http.Request, upTo int) {
	t, id, err := h.aggregateID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	st, err := h.fold(r.Context(), t, id, upTo)
	if err != nil {
		writeError(w, err)
		return
	}
	if upTo != eventstore.MaxVersion && st.Version < upTo {
		writeError(w, factum.NotFound(fmt.Sprintf("aggregate %s has no version %d (it is at %d)", id, upTo, st.Version)).With(id, st.Version, "", ""))
		return
	}
	writeJSON(w, http.StatusOK, stateOfStored(st))
}

// fold returns the aggregate's state at version upTo (or its last one):
// from the latest snapshot at or below it, when a snapshot source is
// configured, brought forward by the streams after it; otherwise from the
// whole history. A missing aggregate is NotFound, and so is one in another
// tenant (missing).
func (h *Handler) fold(ctx context.Context, t aggregate.Type, id factum.AggregateID, upTo int) (aggregate.StoredState, error) {
	from := aggregate.StoredState{ID: id}
	if h.cfg.Snapshots != nil {
		snap, ok, err := h.cfg.Snapshots.LatestState(ctx, id)
		if errors.Is(err, factum.ErrTenantMismatch) {
			// A source over the snapshot store refuses another tenant's
			// snapshot with TenantMismatch (403), which would confirm that
			// the aggregate exists: it is a missing one.
			return from, missing(id)
		}
		if err != nil {
			return from, err
		}
		if ok && snap.Version <= upTo {
			if snap.ID.TenantOrDefault() != id.TenantOrDefault() {
				return from, missing(id)
			}
			from = snap
		}
	}
	var streams []factum.EventStream
	if from.Version < upTo {
		var err error
		if streams, err = h.rt.Store().Load(ctx, id, from.Version+1, upTo); err != nil {
			return from, err
		}
	}
	if from.Version == 0 {
		if len(streams) == 0 {
			return from, missing(id)
		}
		if err := checkTenant(id, streams[0]); err != nil {
			return from, err
		}
	}
	st, err := t.Fold(h.codec, from, streams)
	if err != nil {
		return from, err
	}
	return st, nil
}

// checkExists returns NotFound for a missing aggregate and for one created
// in another tenant than id's.
func (h *Handler) checkExists(ctx context.Context, id factum.AggregateID) error {
	first, err := h.rt.Store().Load(ctx, id, 1, 1)
	if err != nil {
		return err
	}
	if len(first) == 0 {
		return missing(id)
	}
	return checkTenant(id, first[0])
}

// checkLoaded checks streams loaded for id: when there are none, that
// the aggregate exists in id's tenant (checkExists); otherwise that they
// are of id's tenant (checkTenant of the first).
func (h *Handler) checkLoaded(ctx context.Context, id factum.AggregateID, streams []factum.EventStream) error {
	if len(streams) == 0 {
		return h.checkExists(ctx, id)
	}
	return checkTenant(id, streams[0])
}

// checkTenant refuses a stream of an aggregate created in another tenant
// than the request's. Aggregate IDs are unique across tenants, so the
// stores find the stream whatever tenant the request names; this is where
// a tenant is kept from reading another's data.
func checkTenant(id factum.AggregateID, s factum.EventStream) error {
	if s.AggregateID.TenantOrDefault() != id.TenantOrDefault() {
		return missing(id)
	}
	return nil
}

// missing is the answer for an aggregate that does not exist in the
// request's tenant, whether it exists in no tenant or in another one: the
// two are indistinguishable, so a wrong-tenant read learns nothing (not the
// owner, not the version, not that the aggregate exists). It names the
// requested identity only.
func missing(id factum.AggregateID) error {
	return factum.NotFound(fmt.Sprintf("aggregate %s not found", id)).With(id, 0, "", "")
}

// parseVersion reads a version path segment: a whole number >= 1.
func parseVersion(what, v string) (int, error) {
	n, ok := parseNatural(v, eventstore.MaxVersion)
	if !ok || n < 1 {
		return 0, factum.IllegalArgument(fmt.Sprintf("%s %q: want a whole number from 1 to %d in decimal digits", what, v, eventstore.MaxVersion))
	}
	return int(n), nil
}

// parseTime reads a time path segment: RFC 3339 (with or without a
// fraction) or Unix milliseconds.
func parseTime(v string) (time.Time, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, factum.IllegalArgument(fmt.Sprintf("time %q: want RFC 3339 (2026-01-02T15:04:05Z) or Unix milliseconds", v))
	}
	return t, nil
}
