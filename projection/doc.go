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
// writes them; [Setup] creates its tables and [Reset] empties them for a
// rebuild ([Runner.Rebuild]: the reset and the checkpoint's removal commit
// together, then the runner replays the log). The function receives a [Tx]
// (Exec and QueryRow, in the database's own SQL dialect); the adapters
// also give the native transaction (sqlite.SQLTx, postgres.PgxTx).
//
// The Runner reads the global log from the checkpoint in batches: one
// transaction holds a whole batch (Config.BatchSize streams), with the same
// guarantee. A function that fails rolls the batch back; the batch is
// tried again, and if the same stream keeps failing, the streams before
// it commit, the failure is recorded (Config.Failures, the compensation
// package) and the checkpoint moves past it in a transaction of its own,
// without the failed stream's writes. Without a recorder, or when recording
// fails, the runner does not move past the stream.
//
// The adapters: sqlite.NewProjectionStore and postgres.NewProjectionStore
// keep the checkpoints in the context's checkpoint table of the same
// database as the read model.
//
// [NewComponent] runs projections inside an engine (engine.Config's
// Components): the runners run from Start to Shutdown, record failures
// with the engine's recorder, and signal PROJECTED into the engine's sink,
// so a wait for PROJECTED returns once the projections consuming the
// command's events committed.
package projection
