// Package aggregate defines aggregates and processes their commands.
//
// An aggregate type is a state type S plus functions, registered with
// generics so that dispatch is by name with no reflection per call:
//
//	var Carts = aggregate.New[Cart]("shop", "cart",
//		aggregate.Initial(func() Cart { return Cart{Items: map[string]int{}} }),
//		aggregate.Source(func(c *Cart, e ItemAdded) { c.Items[e.SKU] += e.Qty }),
//		aggregate.Handle(func(ctx context.Context, c Cart, cmd AddItem) ([]any, error) {
//			return []any{ItemAdded{cmd.SKU, cmd.Qty}}, nil
//		}, aggregate.AllowCreate()),
//	)
//
// Sourcing functions (Source) apply one event type to the state and must be
// deterministic. Command handlers (Handle) decide: they get the state by
// value and return events, or an error that rejects the command; their
// dependencies come by closure.
//
// A handler may run more than once for one command: the executor runs it
// again after a version conflict or a transient store failure (on the
// reloaded state), and a retried request runs it again. Handlers therefore
// do no side effects themselves. A handler that needs a reservation-style
// side effect (reserve a unique key, release one, move one) binds it to the
// append with [Bind]: the executor applies the bound [Effect]s after the
// handler decided and before the append, undoes them if the append fails
// or is retried, and keeps them once the stream is appended; an effect that
// finds itself already in place for the same owner (a retry of the same
// command) lets the command go on and is not undone by it. When the
// append's outcome is unknown, the executor looks the request up before
// undoing anything. The prepare package's Key.Reserve, Key.Release and
// Key.Change make such effects. Every aggregate also handles the built-in
// DeleteAggregate and RecoverAggregate commands; a deleted aggregate refuses
// everything but recovery.
//
// [Definition.Decide] runs the pre-gates in a fixed order (tenant, expected
// version, existence, owner, deletion, unknown command), then the handler.
// The tenant comes first: to a command of another tenant the aggregate is
// missing (NotFound; a create is told the ID is taken), and its answer
// carries nothing of the aggregate, not its version nor any of its
// requests' outcomes. A handler's context carries the command
// ([CommandFrom]) and its tenant (factum.TenantFromContext).
//
// [Internal] marks a type the framework or the application keeps for
// itself, and [InternalCommand] one command: public APIs (package httpapi)
// route neither.
//
// A [Executor] runs one command end to end: it takes the aggregate's state
// from a bounded LRU cache, or rebuilds it from the latest snapshot (an
// optional [SnapshotSource]) and the streams after it; decides; encodes the
// events into the next stream (version = last + 1, the command's header
// carried over); and appends it. The append is the authority: on an
// EventVersionConflict or a transient store error ([IsTransient]: a lost
// connection, a serialization failure, a busy database) a command without
// an expected version is retried after a reload (3 times, backing off
// exponentially with jitter, so that contending instances do not retry in
// step), one with an expected version fails at once (a conflict with
// CommandExpectVersionConflict). A request whose
// first attempt was already appended is answered with that attempt's
// outcome, marked Duplicate, both when the append reports
// DuplicateRequestId and when the handler rejects the retry. A panic in a
// handler or sourcing function becomes an InternalServerError outcome for
// that command only.
//
// The processing of a type's commands runs inside a [Middleware] chain
// over [CommandFunc], built once per type when the executor is made: the
// engine's (ExecutorConfig.Middleware, from engine.Config's
// CommandMiddleware), the definition's ([WithMiddleware]), then the
// defaults [Recover] and [Retry], which are the panic recovery and the
// retries above. Tracing, metrics, logging and the application's own
// cross-cutting concerns live there; a middleware sees each command once,
// with its final PROCESSED signal.
//
// Commands and events are stored under their message names
// (factum.NameOf: a MessageName method, else the Go type's name in snake
// case). Give stored types a MessageName method, so that renaming the Go
// type renames nothing stored, and lock the names in a test with
// aggregatetest.LockNames, which compares them with a golden list.
package aggregate
