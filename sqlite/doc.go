// Package sqlite is factum's embedded storage adapter, on SQLite through the
// pure-Go driver modernc.org/sqlite (no cgo).
//
// [Open] opens one database file in WAL mode with a busy timeout, one
// connection for writes (SQLite serialises writers anyway; one connection
// avoids SQLITE_BUSY storms) and a pool for reads. Each component built on a
// [DB] (event store, checkpoints, snapshots, prepare keys, idempotency keys)
// applies its own embedded, versioned schema migrations the first time it is
// constructed; they are recorded in the table factum_migrations and applied
// under SQLite's write lock, so two processes starting together apply each
// step once.
//
// Durability: the default synchronous=FULL makes every commit durable on
// power loss. Options.Synchronous "NORMAL" is several times faster and in WAL
// mode still survives a process crash, but may lose the last commits on power
// loss.
//
// The event store (NewEventStore) keeps each bounded context's streams in
// factum_<context>_streams, one row per stream. Writes are serial (one write
// connection; one writer per file across processes), and concurrent appends
// share one transaction, with the snapshot saves, checkpoints and prepare
// keys written beside them: the DB commits those writes that arrive while
// another transaction is in flight together in the next one, up to 128 a
// transaction (the idempotency, lease and projection stores write in
// transactions of their own; each write atomic on its own: when one fails, the transaction is rolled
// back and each write is written again in a transaction of its own), so a busy database pays about one
// fsync per round of writes rather than one per store. The global log is gap-free: positions are the
// AUTOINCREMENT key, handed out inside write transactions that run one at a
// time and commit in the order they took the write lock, so a reader's
// snapshot always holds every stream up to its newest and nothing can appear
// later below a position already read (Position.Tx is zero). WaitLog wakes at
// once for this store's appends and polls for other processes'.
// The stores' reads and the snapshot and checkpoint stores' writes are
// prepared once per connection and kept until the DB closes (translated
// snapshot queries, whose text is built per call, run unprepared); the
// event store's appends' statements close with the event store. Prepared
// reads, and the statements of a write batch, run without watching their
// context for cancellation, which costs the driver a goroutine per
// statement: a read checks its context first and, once started, between
// rows every so often (an aggregate's load, a page of the log), and a wait
// for another process's lock lasts up to BusyTimeout; a batch holds the write lock, so its
// statements wait for nothing, and its timeout bounds the wait for the
// lock and the commit.
//
// Next to the events, NewSnapshotStore keeps every aggregate's latest
// snapshot (factum_<context>_snapshots; version-guarded upserts, queries
// translated by package query/sqlquery; see the SnapshotStore
// documentation for the indexes to add for hot query fields) and
// NewCheckpointStore keeps the consumer groups' positions
// (factum_<context>_checkpoints; a checkpoint never moves backwards).
package sqlite
