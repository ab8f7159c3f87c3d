package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

// getSnapshot serves GET /{aggregate}/{id}/snapshot: the latest saved
// snapshot of the aggregate.
func (h *Handler) getSnapshot(w http.ResponseWriter, r *http.Request) {
	_, id, err := h.aggregateID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s, err := h.cfg.SnapshotStore.Load(r.Context(), id)
	if err == nil && s.AggregateID.TenantOrDefault() != id.TenantOrDefault() || errors.Is(err, factum.ErrTenantMismatch) {
		// Another tenant's snapshot is answered as a missing one.
		err = snapshot.NotFound(id)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, stateOfSnapshot(s))
}

// putSnapshot serves PUT /{aggregate}/{id}/snapshot: the snapshot is
// regenerated from the aggregate's whole history and saved (repairing a
// stored one of the same version), and the stored snapshot is returned.
func (h *Handler) putSnapshot(w http.ResponseWriter, r *http.Request) {
	_, id, err := h.aggregateID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s, err := h.rt.RegenerateSnapshot(r.Context(), id)
	if errors.Is(err, factum.ErrTenantMismatch) {
		err = missing(id)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, stateOfSnapshot(s))
}

// snapshotQuery serves POST /{aggregate}/snapshot/{kind}[/state], kind one
// of single, list, paged, count. The body is the JSON form of the query
// (package query): a Query for single and list, a PagedQuery for paged, a
// Condition for count. The service is scoped to the request's tenant, so no
// condition can reach another tenant's snapshots; the planner's guards
// (list size, page size and window, condition size) apply.
func (h *Handler) snapshotQuery(stateOnly bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := h.aggregateType(r)
		if err != nil {
			writeError(w, err)
			return
		}
		svc, err := h.queries[t.Named()].ForTenant(tenantOf(r))
		if err != nil {
			writeError(w, err)
			return
		}
		body, err := h.readBody(w, r)
		if err != nil {
			writeError(w, err)
			return
		}
		ctx := r.Context()
		var out any
		switch kind := r.PathValue("kind"); kind {
		case "single", "list":
			q, err := query.ParseQuery(body)
			if err != nil {
				writeError(w, err)
				return
			}
			switch {
			case kind == "single" && stateOnly:
				out, err = svc.SingleState(ctx, q)
			case kind == "single":
				var s snapshot.Snapshot
				s, err = svc.Single(ctx, q)
				out = stateOfSnapshot(s)
			case stateOnly:
				out, err = svc.ListState(ctx, q)
			default:
				var list []snapshot.Snapshot
				list, err = svc.List(ctx, q)
				out = statesOfSnapshots(list)
			}
			if err != nil {
				writeError(w, err)
				return
			}
		case "paged":
			q, err := query.ParsePagedQuery(body)
			if err != nil {
				writeError(w, err)
				return
			}
			if stateOnly {
				out, err = svc.PagedState(ctx, q)
			} else {
				var page query.Paged[snapshot.Snapshot]
				page, err = svc.Paged(ctx, q)
				out = query.Paged[AggregateState]{Total: page.Total, List: statesOfSnapshots(page.List)}
			}
			if err != nil {
				writeError(w, err)
				return
			}
		case "count":
			if stateOnly {
				writeError(w, factum.NotFound("count has no state variant"))
				return
			}
			c, err := query.ParseCondition(body)
			if err != nil {
				writeError(w, err)
				return
			}
			n, err := svc.Count(ctx, c)
			if err != nil {
				writeError(w, err)
				return
			}
			out = json.Number(fmt.Sprint(n))
		default:
			writeError(w, factum.NotFound(fmt.Sprintf("no snapshot query %q (want single, list, paged or count)", kind)))
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// snapshotRoutes registers the snapshot routes when a snapshot store is
// configured, and the query routes when it answers queries.
func (h *Handler) snapshotRoutes(in *http.ServeMux) error {
	if h.cfg.SnapshotStore == nil {
		return nil
	}
	in.HandleFunc("GET /{aggregate}/{id}/snapshot", h.getSnapshot)
	in.HandleFunc("PUT /{aggregate}/{id}/snapshot", h.putSnapshot)
	querier, ok := h.cfg.SnapshotStore.(snapshot.Querier)
	if !ok {
		return nil
	}
	for _, t := range h.types {
		svc, err := snapshot.NewQueryService(querier, t.Named(), h.cfg.QueryPlanner)
		if err != nil {
			return err
		}
		h.queries[t.Named()] = svc
	}
	in.HandleFunc("POST /{aggregate}/snapshot/{kind}", h.snapshotQuery(false))
	in.HandleFunc("POST /{aggregate}/snapshot/{kind}/state", h.snapshotQuery(true))
	return nil
}
