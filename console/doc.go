// Package console is factum's operator console: a web application, served
// from assets embedded in the binary, over the HTTP API of package
// httpapi. It has pages for an overview (aggregates and their counts, the
// compensation backlog and, from the service's Prometheus metrics,
// commands/s, latency by stage and consumer lag), failed event-function executions (list, detail,
// force retry, recoverability, target function, retry spec), aggregates
// (event stream, state at any version, snapshot and its regeneration,
// delete and recover), snapshot queries built with a form, request
// lookups, projections (per bounded context: builds, lag and the latest
// failure; rebuild and reset-and-replay; their named read queries run
// from a form built from the OpenAPI document) and, for a service
// clustered on NATS, its instances and the partitions each holds (GET
// /cluster).
//
// The console holds no data and no credential of its own: its pages are
// static (plain HTML, CSS and JavaScript modules, nothing fetched from
// elsewhere, so it works offline), and every datum they show comes from
// the API, called by the operator's browser with the operator's own API
// key or JWT. So the API's access rules are the console's: its pages need
// the read role, its actions the operator role, and a principal sees only
// the tenants it holds (an admin may switch to any); the projections'
// builds and actions and the cluster view span every tenant, so they are
// the admin's, and the pages say so to anyone else. Actions ask for
// confirmation; the API records the principal as the operator of
// compensation actions. Nothing the console sends or receives goes to
// the browser's log.
//
// A Handler serves the assets under Config.Prefix (default /console/);
// mount it beside the API's handler:
//
//	mux.Handle(console.DefaultPrefix, consoleHandler)
//	mux.Handle("/", apiHandler)
package console
