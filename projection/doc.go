// Package projection keeps read models in SQL tables, updated exactly once
// per stream: a projection function writes its rows in a transaction of the
// read model's database, and the [Runner] saves the projection's checkpoint
// in the same transaction, so the rows and the checkpoint commit together
// or not at all, whatever crashes. There is no window in which a stream's
// effect is stored but its checkpoint is not (which at-least-once event
// functions must make idempotent by hand), and none in which the
// checkpoint moved past a stream whose rows were lost.
//
// A [Projection] names the events it consumes and the function that
// writes them; [Setup] creates its tables. The function receives a [Tx]
// (Exec and QueryRow, in the database's own SQL dialect; Queue, for
// statements whose outcome it does not read, which PostgreSQL sends a
// batch's worth at a time in one round trip; and Table, the physical name
// of a declared table); the adapters also give the native transaction
// (sqlite.SQLTx, postgres.PgxTx).
//
// With a [Schema] (a version and the table names) a projection has builds,
// each with tables and a checkpoint of its own, and the store records which
// build is live. [Runner.Rebuild] fills a new build from the log's start
// beside the live one, which keeps serving, and switches to it in one
// transaction once it is as far along; a higher Schema version deployed
// does the same at start. [Runner.ResetAndReplay] empties the live build
// and replays it, for development.
//
// [Query] declares named read queries with typed parameters ([Param]); a
// query reaches the tables only through [Scope.From], which reads the live
// build's rows of the caller's tenant, so it cannot leak another tenant's
// rows. httpapi serves them as GET /{context}/projection/{name}/{query}.
//
// The Runner reads the global log from the checkpoint in batches: one
// transaction holds a whole batch (Config.BatchSize streams), with the same
// guarantee. A batch holding no stream the projection consumes opens no
// transaction: the checkpoint passes it with a later one (see
// Config.CheckpointInterval), and a crash before that only reads it again.
// A function that fails rolls the batch back; the batch is
// tried again, and if the same stream keeps failing, the streams before
// it commit, the failure is recorded (Config.Failures, the compensation
// package) and the checkpoint moves past it in a transaction of its own,
// without the failed stream's writes but with a failure mark, so that
// [Runner.Retry] (compensation's retry) applies it once. Without a
// recorder, or when recording fails, the runner does not move past the
// stream.
//
// The adapters: sqlite.NewProjectionStore and postgres.NewProjectionStore
// keep the checkpoints, the builds' state and the failure marks in the
// same database as the read model.
//
// [NewComponent] runs projections inside an engine (engine.Config's
// Components): the runners run from Start to Shutdown, record failures
// with the engine's recorder, and signal PROJECTED into the engine's sink,
// so a wait for PROJECTED returns once the projections consuming the
// command's events committed. It answers operators (List, Status, Rebuild,
// ResetAndReplay), queries, and compensation's retries (Redeliver).
package projection
