// Package postgres is factum's PostgreSQL adapter, on pgx v5 and its pool.
//
// [Open] connects (failing fast with a clear error when the server is down)
// and optionally confines every table to one schema. Each component built on
// a [DB] (event store, checkpoints, snapshots, prepare keys, idempotency
// keys) applies its own embedded, versioned schema migrations the first time
// it is constructed; they are recorded in the table factum_migrations and
// applied under a transaction-scoped advisory lock, so two processes
// starting together apply each step once.
//
// The event store (NewEventStore) keeps each bounded context's streams in
// factum_<context>_streams, one row and one INSERT per append; concurrent
// appends of different aggregates share one statement, written by one of a
// few writers (EventStoreOptions.Writers, default 2), each on a connection
// of its own outside the pool. The log is ordered by
// (transaction ID, sequence) and read only below the oldest running
// transaction, so a late-committing stream is never skipped; a long
// transaction anywhere on the server holds the log back until it ends. Stores
// NOTIFY each other, at most every EventStoreOptions.NotifyInterval (default
// 10 ms); WaitLog also polls.
//
// Next to the events, NewSnapshotStore keeps every aggregate's latest
// snapshot (factum_<context>_snapshots; version-guarded upserts, queries
// translated by package query/sqlquery; see the SnapshotStore
// documentation for the indexes to add for hot query fields) and
// NewCheckpointStore keeps the consumer groups' positions
// (factum_<context>_checkpoints; a checkpoint never moves backwards).
package postgres
