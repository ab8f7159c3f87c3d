// Package snapshotter keeps each aggregate's latest snapshot from the
// event log: one consumer group per bounded context (executor
// "snapshotter", a function per aggregate type) folds each stream onto the
// last snapshot and saves the result as the strategy says, then signals
// SNAPSHOT. Under the All strategy it saves the state the aggregate
// executor reported as it appended (States), so the fold runs on the
// executor's lanes, not on the snapshotter's; it folds only when the
// report is missing (a stream of another instance, or a dropped report).
// It keeps per type the last snapshots and their typed states, so that the
// next stream of an aggregate needs neither a load nor a decode.
//
// Component is the snapshotter as an engine component: the engine uses one
// by default whenever it has a snapshot store (engine.Config's Storage or
// SnapshotStore), and engine.Config's Snapshotter replaces it. On stores
// with a batch fast path (BatchSaver, CheckpointBatchSaver: the SQL
// stores) it saves each consumer batch at once, one snapshot per
// aggregate, in one transaction with the consumer's checkpoint, and
// signals each stream once that transaction has committed (see
// Component). Regenerate is the operator's repair behind
// Engine.RegenerateSnapshot.
package snapshotter
