// Package eventstore defines the event store contract, its front end over
// small backend contracts, and an in-memory implementation.
//
// [Store] is the interface users pass around. [Front] is its one
// implementation of the checks every store makes, over a [Backend], as
// database/sql is over database/sql/driver: it checks the context and the
// input, shapes refusals into the contract's errors, takes each
// operation's fast path when the backend has one ([RequestFinder],
// [RequestProber], [TimeLoader], [AggregateScanner], [LogWaiter]) and a
// generic fallback over Load and ReadLog when it has not, and wakes its
// log waiters once after every append. Backends apply the front end in
// their constructors ([NewMemory], sqlite.NewEventStore,
// postgres.NewEventStore return types that embed a Front), so a user never
// meets the split; a new backend implements Backend (and the fast paths it
// can serve well) and calls [New].
//
// [Store.Append] is where history becomes authoritative. Inside its own
// atomic write a store refuses, in this order of precedence:
//
//   - TenantMismatch: the aggregate exists under another tenant;
//   - DuplicateRequestId: the aggregate already has a stream with this
//     request ID (a retried intent, not a competing one);
//   - DuplicateAggregateId: a version-1 stream for an aggregate that exists
//     (another intent took this ID);
//   - EventVersionConflict: the version is not exactly last + 1.
//
// The errors are *factum.Error values built from the request (aggregate,
// version, request ID), matched with errors.Is against the factum.Err*
// sentinels. Checking first and writing afterwards in Go is never a
// substitute for the store's own atomic check.
//
// Tenants are sealed off from each other on every path that can answer
// about a request: the tenant check comes first in Append, so a request ID
// another tenant used is a TenantMismatch, never a DuplicateRequestId; and
// [Store.Lookup] and [Store.RequestExists] find a request only in its
// aggregate's own tenant, answering any other as for a request never made.
// No error names the owning tenant or carries its versions or IDs.
//
// Appending is publication: every store keeps a global log of streams in
// append order, which event consumers read from their own checkpoints with
// [Store.ReadLog] and wait on with [Store.WaitLog]. The package
// eventstoretest holds the contract kit every implementation runs.
package eventstore
