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
// Memory is the in-memory QueryStore. Package snapshottest is the contract
// kit every store runs.
package snapshot
