package telemetry

import (
	"net/http"
	"strings"
)

// The patterns of the HTTP API (package httpapi), the label and span name
// of a request: a template, never the path itself, so the label set stays
// bounded. Like httpapi, the service routes come first, then the
// compensation routes under their prefix, then the aggregate routes.
var (
	serviceRoutes      = []string{"GET /openapi.json", "GET /healthz", "GET /readyz", "GET /metrics"}
	compensationRoutes = []string{
		"GET /compensation/executions",
		"GET /compensation/executions/{id}",
		"POST /compensation/executions/{id}/retry",
		"PUT /compensation/executions/{id}/retry-spec",
		"PUT /compensation/executions/{id}/recoverable",
		"PUT /compensation/executions/{id}/function",
		"GET /compensation/counts",
	}
)

var aggregateRoutes = []string{
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
}

// commandRoutes are the routes that send a command.
var commandRoutes = map[string]bool{
	"POST /{aggregate}/{command}":      true,
	"POST /{aggregate}/{id}/{command}": true,
	"DELETE /{aggregate}/{id}":         true,
	"PUT /{aggregate}/{id}/recover":    true,
}

const tenantPrefix = "/tenant/"

const compensationPrefix = "/compensation/"

// router finds the template of a request's route.
type router struct{ service, compensation, aggregates *http.ServeMux }

func newRouter() *router {
	mux := func(patterns []string) *http.ServeMux {
		m := http.NewServeMux()
		none := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		for _, p := range patterns {
			m.Handle(p, none)
		}
		return m
	}
	return &router{service: mux(serviceRoutes), compensation: mux(compensationRoutes), aggregates: mux(aggregateRoutes)}
}

// route returns the template of r's route ("GET /{aggregate}/{id}/state",
// "GET /tenant/{tenant}/{aggregate}/{id}/state") and whether it sends a
// command; a request no route matches is "other".
func (rt *router) route(r *http.Request) (string, bool) {
	if _, pattern := rt.service.Handler(r); pattern != "" {
		return pattern, false
	}
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
	m := rt.aggregates
	if strings.HasPrefix(r.URL.Path, compensationPrefix) {
		m = rt.compensation
	}
	_, pattern := m.Handler(r)
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
