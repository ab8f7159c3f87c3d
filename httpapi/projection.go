package httpapi

import (
	"context"
	"net/http"
	"slices"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/projection"
)

// The path segments of the projection routes, after /{context}/.
const (
	projectionSegment  = "projection"  // read queries
	projectionsSegment = "projections" // operator routes
)

// projectionMux is the mux of the projection routes of Config.Projections:
// its patterns start with the projections' bounded contexts literally, so
// only paths under those contexts reach it and no aggregate route is
// shadowed.
type projectionMux struct {
	mux   *http.ServeMux
	roles map[string]auth.Role
}

// projectionRoutes returns the projection routes, or nil without
// Config.Projections.
func (h *Handler) projectionRoutes() *projectionMux {
	c := h.cfg.Projections
	if c == nil {
		return nil
	}
	pm := &projectionMux{mux: http.NewServeMux(), roles: map[string]auth.Role{}}
	var contexts []string
	for _, p := range c.Projections() {
		if !slices.Contains(contexts, p.Context()) {
			contexts = append(contexts, p.Context())
		}
	}
	for _, ctx := range contexts {
		base := "/" + ctx + "/"
		route := func(pattern string, role auth.Role, fn http.HandlerFunc) {
			pm.mux.HandleFunc(pattern, fn)
			pm.roles[pattern] = role
		}
		route("GET "+base+projectionSegment+"/{name}/{query}", auth.RoleRead, h.projectionQuery(ctx))
		// A projection's builds hold every tenant's rows: its status
		// counts every tenant's streams and a rebuild or reset changes
		// what every tenant reads, so these routes are the admin's (as
		// /metrics and /cluster are), not a tenant's operator's.
		route("GET "+base+projectionsSegment, auth.RoleAdmin, h.listProjections(ctx))
		route("GET "+base+projectionsSegment+"/{name}", auth.RoleAdmin, h.projectionStatus(ctx))
		route("POST "+base+projectionsSegment+"/{name}/rebuild", auth.RoleAdmin, h.projectionAction(ctx, c.Rebuild))
		route("POST "+base+projectionsSegment+"/{name}/reset", auth.RoleAdmin, h.projectionAction(ctx, c.ResetAndReplay))
	}
	return pm
}

// match returns the pattern of the projection route r asks for, or "".
func (pm *projectionMux) match(r *http.Request) string {
	if pm == nil {
		return ""
	}
	_, pattern := pm.mux.Handler(r)
	return pattern
}

// role returns the role the projection route r asks for needs, and
// whether r is a projection route.
func (pm *projectionMux) role(r *http.Request) (auth.Role, bool) {
	p := pm.match(r)
	if p == "" {
		return "", false
	}
	return pm.roles[p], true
}

// wrap serves the projection routes with pm and every other one with next.
func (pm *projectionMux) wrap(next http.Handler) http.Handler {
	if pm == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pm.match(r) != "" {
			pm.mux.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// projectionQuery serves GET /{context}/projection/{name}/{query}: the
// query's rows of the request's tenant (from the principal, or the
// /tenant/{tenant} prefix). Every query parameter is given once; a
// repeated, unknown or malformed one is a 400.
func (h *Handler) projectionQuery(context string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw := map[string]string{}
		for k, vs := range r.URL.Query() {
			if len(vs) != 1 {
				writeError(w, factum.IllegalArgument("query parameter "+k+" is given more than once"))
				return
			}
			raw[k] = vs[0]
		}
		res, err := h.cfg.Projections.Query(r.Context(), tenantOf(r), context, r.PathValue("name"), r.PathValue("query"), raw)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	}
}

// listProjections serves GET /{context}/projections: the status of every
// projection of the context.
func (h *Handler) listProjections(context string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		all, err := h.cfg.Projections.List(r.Context())
		if err != nil {
			writeError(w, err)
			return
		}
		out := []projection.Status{}
		for _, s := range all {
			if s.Context == context {
				out = append(out, s)
			}
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// projectionStatus serves GET /{context}/projections/{name}.
func (h *Handler) projectionStatus(context string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := h.cfg.Projections.Status(r.Context(), context, r.PathValue("name"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, s)
	}
}

// projectionAction serves POST /{context}/projections/{name}/rebuild and
// …/reset: it runs the action, then answers the projection's status.
func (h *Handler) projectionAction(bc string, action func(ctx context.Context, bc, name string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if err := action(r.Context(), bc, name); err != nil {
			writeError(w, err)
			return
		}
		s, err := h.cfg.Projections.Status(r.Context(), bc, name)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, s)
	}
}
