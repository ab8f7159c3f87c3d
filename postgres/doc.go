// Package postgres is factum's PostgreSQL adapter, on pgx v5 and its pool.
//
// [Open] connects (failing fast with a clear error when the server is down)
// and optionally confines every table to one schema. Each component built on
// a [DB] (event store, checkpoints, snapshots, prepare keys, idempotency
// keys) applies its own embedded, versioned schema migrations the first time
// it is constructed; they are recorded in the table factum_migrations and
// applied under a transaction-scoped advisory lock, so two processes
// starting together apply each step once.
package postgres
