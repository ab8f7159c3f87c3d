// Package event runs event functions — projections, event handlers, sagas,
// the snapshotter — over the event store's global log.
//
// A [Processor] groups the functions of one component under a stable
// identity; each function ([Handler]) names the events it consumes and the
// wait stage it signals. A [Consumer] runs one processor as a consumer
// group: it reads the store's log from the processor's durable checkpoint
// ([CheckpointStore]), is woken at once by appends (eventstore.Store.WaitLog),
// hands every stream to the functions that consume one of its events, in
// log order (so one aggregate's streams arrive in version order), signals
// each function's stage for the stream's command, and saves the checkpoint
// after the stream. A slow or failing consumer holds up only itself.
//
// Delivery is at least once: a crash between a function's side effect and
// the checkpoint save delivers the stream again after restart. Functions
// with side effects outside the checkpoint's store make them idempotent by
// event ID (the seeds' "downstream idempotency"); a graceful stop finishes
// the stream in hand and saves its checkpoint, so it neither skips nor
// repeats a stream.
//
// A failing function is retried a few times in place; then the failure is
// handed to a [FailureRecorder] (the compensation package records it
// durably) before the consumer moves on. If recording fails the consumer
// does not advance: the stream is delivered again rather than the failure
// lost. A consumer remembers its recent failures ([Consumer.FailureOn]),
// so that a repeated request waiting for a branch stage learns of one. The
// contract is checked by the kit in package consumertest, which every
// consumer, log and checkpoint store combination runs.
//
// Each function runs inside a [Middleware] chain, built once at
// NewConsumer: the consumer's (Config.Middleware, the engine's
// EventMiddleware), the processor's ([WithMiddleware]), the function's
// ([WithFunctionMiddleware]), then the defaults [Retry] (the in-place
// attempts), [Timeout] (each attempt's deadline) and [Recover] (a panic
// becomes an InternalServerError). Tracing, metrics, logging and the
// application's own cross-cutting concerns live there; a middleware sees
// each delivery once, with its final error.
//
// Every function runs in its stream's tenant: its context carries the
// stream's tenant (factum.TenantFromContext; factum.DefaultTenant for a
// stream without one), whatever the middleware outside did with the
// context, on a live delivery, a redelivery and Invoke alike. So a saga's
// per-tenant unique keys (prepare.PerTenant), and anything else scoped by
// the context's tenant, are scoped by the tenant of the stream handled.
//
// A processor is a definition, independent of any runtime: [On] decodes
// with the codec registry the processor is bound to ([Processor.Bind]; the
// engine binds each one to its registry at New), and a processor may carry
// its own consumer settings ([WithSettings]) over the engine's. Functions
// are named after the message names of their events: give stored event
// types a MessageName method, so that a Go rename changes no stored name
// (aggregatetest.LockNames locks them against a golden list).
package event
