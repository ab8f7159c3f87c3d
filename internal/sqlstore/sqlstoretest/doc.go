// Package sqlstoretest is the one test run of the SQL stores that every
// dialect shares: the contract kits of the event, snapshot, checkpoint,
// lease, projection and consumer stores and of the storage handle, the
// end-to-end cart service, and the checks of the SQL layer itself
// (context names, closing the stores and the handle, reopening,
// idempotency options, a nil DB), and, called on their own, the model checks
// (CheckModels), the concurrent migrations (MigrateConcurrently), the
// snapshot index plans (CheckIndexes) and the benchmarks' bodies (Bench*).
// Each backend's tests call Run with the way to open its database; what
// only one backend has (its writers, its log's order, its locks) stays in
// that backend's own tests.
package sqlstoretest
