// Package telemetry instruments a factum service with OpenTelemetry traces,
// Prometheus metrics and slog logs, from the outside: every piece is a
// middleware or a decorator over an interface the service already has, so
// the core packages carry no instrumentation and pay nothing without it.
//
//   - Commands and Events are middleware for the command pipeline (one
//     span and one latency observation per processed command) and for the
//     event functions (one span per stream handled, failures counted;
//     projection.Config's Middleware takes Events for the projections a
//     projection.Runner runs). Commands also counts the state cache's hits
//     and misses and marks the steps of the processing (load, decide,
//     effects, append, retries), which the executor reports to the
//     aggregate.PhaseObserver it puts in the command's context.
//   - Bus wraps the command bus: the trace context written into the
//     command's header, so that the processor, the event functions and
//     the commands a saga sends continue the same trace, across processes
//     too.
//   - Store wraps an event store: append latency and batch size by
//     backend, and a span per call outside a command's processing.
//   - Compensation observes the compensation's retries: a span per
//     attempt with its outcome, attempts counted.
//
// Config.Spans sets how many spans a command makes. SpansPerCommand (the
// default) records one, with the other hops as events on it, since each
// recorded span costs the SDK about as much as an in-memory command's
// processing; SpansDetailed records the send, the processing's steps and
// every store call as spans of their own.
//   - IdempotencyStore and PrepareBackend wrap the idempotency-key store
//     and the prepare-key backend: calls counted by operation and outcome.
//   - HTTP wraps an http.Handler: otelhttp spans named by route template,
//     request counts and latency by route and status, and an access log.
//   - Lag and Backlog are collectors read at each scrape: consumer lag
//     (log end minus checkpoint, in streams and seconds) and compensation
//     executions by status.
//
// Label sets are bounded: aggregate types, functions, route templates,
// codes and statuses, never an aggregate ID or a request ID. A Telemetry
// without a tracer provider starts no spans (a no-op tracer), and one
// without a registerer observes no metrics.
package telemetry
