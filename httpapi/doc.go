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
// under /tenant/{tenant}/…, and the tenant is checked on every route: a
// request naming a tenant other than the one an existing aggregate was
// created in is refused with 403 TenantMismatch. Routes without the prefix
// act in factum.DefaultTenant. Because of the prefix, "tenant" cannot be
// used as an aggregate name in URLs.
//
// Errors are JSON bodies (see ErrorBody) whose status comes from the one
// code-to-status table, factum.Code.HTTPStatus. The only transport-level
// exception is an oversized body: 413 with code BadRequest.
//
// Limits are on by default: the request body size (DefaultMaxBodyBytes),
// the wait timeout a caller may ask for (DefaultMaxWaitTimeout), the
// number of streams one event-range request may return
// (DefaultMaxEventRange) and the snapshot query guards of package query
// (Config.QueryPlanner).
//
// Reserved path segments: "tenant" as an aggregate name, and "snapshot" as
// an aggregate ID on POST routes (POST /{aggregate}/snapshot/… is a query).
package httpapi
