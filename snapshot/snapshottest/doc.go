// Package snapshottest is the contract kit for snapshot stores: Run checks
// a snapshot.Store against every rule of the contract — round trips at
// millisecond precision, the version guard (lower never overwrites, equal
// repairs, higher replaces), tenant mismatches, buffers not retained,
// cancellation, and concurrent saves that always keep the highest version.
// For a store that is also a snapshot.Querier it runs the whole query
// corpus of package querytest through a snapshot.QueryService, the typed,
// state-only and document variants, tenant scoping, read-after-write and
// queries racing saves.
//
// Every snapshot store, in memory, SQLite or PostgreSQL, yours included,
// runs the same kit.
package snapshottest
