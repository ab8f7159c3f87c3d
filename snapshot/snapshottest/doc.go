// Package snapshottest is the contract kit for snapshot stores: Run checks
// a snapshot.Store against every rule of the contract — round trips at
// millisecond precision, the version guard (lower never overwrites, equal
// repairs, higher replaces), tenant mismatches, buffers not retained,
// cancellation, and concurrent saves that always keep the highest version.
// For a store that is also a snapshot.Querier it runs the whole query
// corpus of package querytest through a snapshot.QueryService, the typed,
// state-only and document variants, tenant scoping, read-after-write and
// queries racing saves. For a store that is a snapshot front end (it has
// a Backend method) it holds each fast path to its fallback, as
// testing/fstest holds ReadFileFS to Open: the backend's Finder answers
// the corpus as a front end over its Scan alone does, and the batch saves
// (SaveBatch, SaveBatchAt) report and store what Save, one snapshot at a
// time, does.
//
// Every snapshot store, in memory, SQLite or PostgreSQL, yours included,
// runs the same kit.
package snapshottest
