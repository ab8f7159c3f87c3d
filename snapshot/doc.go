// Package snapshot keeps aggregate states as snapshots and answers queries
// over them.
//
// A Snapshot is an aggregate's state at one version, with its owner,
// operators and times. A Strategy decides after each new version whether
// to save: All (the default) saves every time, so the snapshot store is
// also the current-state query store; VersionOffset(n) saves when n
// versions have passed since the last save. A Store keeps the latest
// snapshot of each aggregate and guards every save by version inside its
// own atomic write: a lower version never overwrites a higher one, an
// equal version repairs, a higher one replaces.
//
// Stores that implement Querier answer the query language of package query
// through a QueryService: Single, List, Paged and Count, each also as
// state only (SingleState, ...) and as projected documents
// (SingleDocument, ...). Deleted snapshots are left out unless the
// condition names deletion, guards are on by default, and ForTenant scopes
// a service to one tenant whatever the query says. A snapshot's query
// document is its JSON form without the type names; see
// Snapshot.Document.
//
// Front is the one implementation of the contract's checks, over a small
// Backend (save, load, scan) as database/sql is over its driver: it checks
// the context and the input, normalizes what it saves, shapes the
// backend's outcomes into the contract's errors, and answers queries
// through the backend's Finder or a generic fallback over Scan. A backend
// that saves many snapshots in one atomic write (BatchSaver,
// CheckpointBatchSaver: the SQL stores) is put under a BatchFront, which
// forwards those saves to the snapshotter. Memory is the in-memory
// QueryStore, a Front over the memory backend. Package snapshottest is the
// contract kit every store runs; it holds every fast path to its fallback.
package snapshot
