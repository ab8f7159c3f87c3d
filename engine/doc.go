// Package engine wires the command side from a configuration: a gateway
// with its request-ID pre-check and wait routing, the command bus (by
// default in process: a dispatcher of lanes by aggregate), and an executor
// per aggregate type, all over one event store and one codec registry per
// engine.
//
// The storage is one handle (Config.Storage: sqlite.DB, postgres.DB,
// memory.Storage): at New the engine opens there the event store, snapshot
// store and checkpoints of its aggregate types' bounded context, which
// they must share, so that a storage that cannot serve the context fails
// New. Store, SnapshotStore and Checkpoints override a kind each.
//
//	db, err := sqlite.Open(ctx, "factum.db")
//	rt, err := engine.New(engine.Config{Storage: db}, Carts)
//	...
//	if err := rt.Start(ctx); err != nil { ... }
//	defer rt.Shutdown(shutdownCtx)
//	res, err := rt.Gateway().SendAndWait(ctx,
//		factum.NewCommand(Carts.ID("cart-42"), AddItem{SKU: "sku-1", Qty: 2}).WithRequestID("req-7"),
//		command.Wait(factum.StageProcessed))
//
// With a snapshot store, the snapshotter saves every aggregate's
// state after each stream (or as Config.SnapshotStrategy says) and signals
// SNAPSHOT. Under the All strategy it saves the state the executor
// reached by the append, which the executor reports as it appends
// (aggregate.StateObserver), and folds the stream onto the last snapshot
// only when that report is missing (the stream came from another instance,
// or the report was dropped); under other strategies it folds. Its
// consumer handles streams of different aggregates on up to four lanes,
// and on the SQL stores saves each batch of streams in one transaction
// with its checkpoint, one snapshot per aggregate. The snapshotter is a
// component (snapshotter.Component) the engine makes by default;
// Config.Snapshotter replaces it and Config.DisableSnapshotter turns it
// off.
//
// Sagas send their commands through the gateway and wait until each is
// decided (PROCESSED) before their consumer moves on; a refused command is
// a failure of the saga, recorded through Config.Failures. The gateway
// learns from the consumers' checkpoints how far each function has got, so
// a repeated request that asks for a branch stage waits for it on its
// first attempt's stream.
//
// Components (Config.Components; compensation's, for one) bring aggregate
// types, event functions and a failure recorder at New, attach to the
// built engine, run from Start and stop first at Shutdown. The bus
// (Config.Bus) and the sink of wait signals (Config.Signals) are seams a
// transport plugs into.
//
// Shutdown refuses clients at once, then lets the accepted work run to
// its end (commands, the streams they append, and the commands sagas send
// in reaction) before it stops the lanes and the consumers, or stops at the
// caller's deadline.
package engine
