// Package httpapi serves a factum runtime over HTTP: commands with every
// Command-* header and, on request, a Server-Sent Events stream of their
// signals; aggregate state (current, at a version, at a time); event streams
// by version range; request lookup; delete and recover; the latest snapshot
// and snapshot queries (single, list, paged, count, and their state-only
// variants) when a snapshot store is configured; the compensation operator
// routes; an OpenAPI 3.0.3 document built from the aggregate registry on
// kin-openapi's typed model and validated before it is served; and health
// endpoints.
//
// State has one shape everywhere (AggregateState): /state, /snapshot and
// the snapshot query results nest the identity and write times as RFC 3339
// with milliseconds. Command bodies are decoded strictly: an unknown field
// is 400 BadRequest naming it, unless the aggregate allows unknown fields
// (aggregate.AllowUnknownFields).
//
// Routing uses the standard library's pattern mux. Every route also exists
// under /tenant/{tenant}/…; routes without the prefix act in
// factum.DefaultTenant. The request's tenant is put in its context
// (factum.ContextWithTenant, read back with TenantOf) for the command
// middleware and the handlers. The tenant is checked on every route, and
// an aggregate of another tenant is answered exactly as a missing one (404
// NotFound naming only what the request named): a tenant learns nothing of
// another's data, not even that it exists. Because of the prefix, "tenant"
// cannot be used as an aggregate name in URLs.
//
// Only public aggregate types are routed: types defined with
// aggregate.Internal and commands marked aggregate.InternalCommand() have no
// route and are left out of the OpenAPI document.
//
// Errors are JSON bodies (see ErrorBody) whose status comes from the one
// code-to-status table, Status. The only transport-level
// exception is an oversized body: 413 with code BadRequest. Text errors
// written inside the handler chain (by net/http's mux, http.Error in a
// middleware) are replaced by the ErrorBody of their status, and a panic is
// answered with a 500 ErrorBody; serve the Handler on an ErrorListener and
// the errors net/http's server answers before any handler runs are too. Bodies must be valid UTF-8 (400 otherwise)
// and numbers in headers and paths canonical decimals.
//
// Limits are on by default: the request body size (DefaultMaxBodyBytes),
// the wait timeout a caller may ask for (DefaultMaxWaitTimeout), the
// number of streams one event-range request may return
// (DefaultMaxEventRange) and the snapshot query guards of package query
// (Config.QueryPlanner).
//
// Reserved path segments: "tenant" as an aggregate name, and "snapshot" as
// an aggregate ID on POST routes (POST /{aggregate}/snapshot/… is a query).
//
// Access control is off by default and on with Config.Access: every
// request but /healthz, /readyz and /openapi.json then needs a credential
// (401 Unauthorized with WWW-Authenticate otherwise), acts in a tenant the
// credential holds (404 for any other, as for a tenant that does not
// exist), needs its route's role (403 Forbidden) and may be
// rate-limited per tenant (429 with Retry-After). The principal is recorded
// in each command's header (HeaderPrincipal). NewServer and ConnLimiter
// give an http.Server timeouts and a connection cap; Config.Streams bounds
// event streams.
package httpapi
