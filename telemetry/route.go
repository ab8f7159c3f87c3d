package telemetry

import (
	"net/http"
	"strings"
)

// routes are the patterns of the HTTP API (package httpapi), the label
// and span name of a request: a template, never the path itself, so the
// label set stays bounded.
var routes = []string{
	"POST /{aggregate}/{command}",
	"POST /{aggregate}/{id}/{command}",
	"DELETE /{aggregate}/{id}",
	"PUT /{aggregate}/{id}/recover",
	"GET /{aggregate}/{id}/state",
	"GET /{aggregate}/{id}/state/{version}",
	"GET /{aggregate}/{id}/state/time/{time}",
	"GET /{aggregate}/{id}/event/{from}/{to}",
	"GET /{aggregate}/{id}/request/{requestId}",
	"GET /{aggregate}/{id}/snapshot",
	"PUT /{aggregate}/{id}/snapshot",
	"POST /{aggregate}/snapshot/{kind}",
	"POST /{aggregate}/snapshot/{kind}/state",
	"GET /compensation/executions",
	"GET /compensation/executions/{id}",
	"POST /compensation/executions/{id}/retry",
	"PUT /compensation/executions/{id}/retry-spec",
	"PUT /compensation/executions/{id}/recoverable",
	"PUT /compensation/executions/{id}/function",
	"GET /compensation/counts",
	"GET /openapi.json",
	"GET /healthz",
	"GET /readyz",
	"GET /metrics",
}

// commandRoutes are the routes that send a command.
var commandRoutes = map[string]bool{
	"POST /{aggregate}/{command}":      true,
	"POST /{aggregate}/{id}/{command}": true,
	"DELETE /{aggregate}/{id}":         true,
	"PUT /{aggregate}/{id}/recover":    true,
}

const tenantPrefix = "/tenant/"

// router finds the template of a request's route.
type router struct{ mux *http.ServeMux }

func newRouter() *router {
	mux := http.NewServeMux()
	none := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, p := range routes {
		mux.Handle(p, none)
	}
	return &router{mux: mux}
}

// route returns the template of r's route ("GET /{aggregate}/{id}/state",
// "GET /tenant/{tenant}/{aggregate}/{id}/state") and whether it sends a
// command; a request no route matches is "other".
func (rt *router) route(r *http.Request) (string, bool) {
	tenant := false
	if rest, ok := strings.CutPrefix(r.URL.Path, tenantPrefix); ok {
		if i := strings.IndexByte(rest, '/'); i > 0 {
			r2 := *r
			u := *r.URL
			u.Path, u.RawPath = rest[i:], ""
			r2.URL = &u
			r, tenant = &r2, true
		}
	}
	_, pattern := rt.mux.Handler(r)
	if pattern == "" {
		return "other", false
	}
	cmd := commandRoutes[pattern]
	if tenant {
		method, path, _ := strings.Cut(pattern, " ")
		pattern = method + " /tenant/{tenant}" + path
	}
	return pattern, cmd
}
