package httpapi

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// getEvents serves GET /{aggregate}/{id}/event/{from}/{to}: the streams
// with from <= version <= to, at most MaxEventRange versions per request.
// An existing aggregate with no streams in the range is an empty list; a
// missing one is NotFound.
func (h *Handler) getEvents(w http.ResponseWriter, r *http.Request) {
	_, id, err := h.aggregateID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	from, err := parseVersion("from", r.PathValue("from"))
	if err != nil {
		writeError(w, err)
		return
	}
	to, err := parseVersion("to", r.PathValue("to"))
	if err != nil {
		writeError(w, err)
		return
	}
	if to < from {
		writeError(w, factum.IllegalArgument(fmt.Sprintf("version range [%d, %d]: to is below from", from, to)))
		return
	}
	if to-from+1 > h.cfg.MaxEventRange {
		writeError(w, factum.IllegalArgument(fmt.Sprintf("version range [%d, %d] spans more than %d versions: page through it", from, to, h.cfg.MaxEventRange)))
		return
	}
	streams, err := h.rt.Store().Load(r.Context(), id, from, to)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := h.checkLoaded(r.Context(), id, streams); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, withoutPositions(streams))
}

// withoutPositions returns a copy of streams without their places in the
// global log, for a tenant to read: positions count every tenant's
// streams, so the gap between two of one tenant's would tell it how much
// the other tenants wrote in between.
func withoutPositions(streams []factum.EventStream) []factum.EventStream {
	out := slices.Clone(streams)
	for i := range out {
		out[i].Position = factum.Position{}
	}
	return out
}

// getRequest serves GET /{aggregate}/{id}/request/{requestId}: was the
// request appended to the aggregate, and as what? 200 with the PROCESSED
// result of its stream, or 404 NotFound when it was not appended.
func (h *Handler) getRequest(w http.ResponseWriter, r *http.Request) {
	_, id, err := h.aggregateID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	reqID := r.PathValue("requestId")
	if err := factum.ValidateID("request id", reqID); err != nil {
		writeError(w, err)
		return
	}
	res, err := h.rt.Gateway().Lookup(r.Context(), id, reqID)
	if err != nil {
		writeError(w, err)
		return
	}
	if res.AggregateID.TenantOrDefault() != id.TenantOrDefault() {
		// The gateway answers another tenant's request as never made;
		// this keeps it so whatever the store.
		writeError(w, eventstore.NotFoundRequest(id, reqID))
		return
	}
	writeJSON(w, http.StatusOK, res)
}
