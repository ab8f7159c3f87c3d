// Package command is where commands enter and how callers learn their
// outcome.
//
// The [Gateway] completes a command (request ID defaults to the command ID;
// a create command without an aggregate ID gets one derived from its
// aggregate type, tenant and request ID, [Gateway.CreateID], so a retried
// create finds its first attempt and another tenant's create its own
// aggregate; with [GatewayConfig.IDKey] set, no one without the key can
// compute it),
// validates it (bodies
// implementing [Validator] are checked: CommandValidation with binding
// errors), answers a repeated request early from the event store through
// the [RequestChecker] (a per-aggregate-type bloom filter; "maybe seen" asks
// the store), sends it on a [Bus] and waits for a [WaitPlan]'s stage:
//
//   - Send returns at SENT;
//   - SendAndWait returns the stage's [Result], or the first failure: a
//     failed PROCESSED ends every wait at once; a branch stage (SNAPSHOT,
//     PROJECTED, EVENT_HANDLED, SAGA_HANDLED) completes after a successful
//     PROCESSED once every function that consumes the events has signalled
//     ([Consumers]), and at once, with a Note, when none consumes them;
//   - SendAndWaitStream yields every result in stage order;
//   - Lookup answers from the event store whether a request was appended.
//
// A timeout or a cancelled context ends the wait, never the command: the
// result is RequestTimeout with the outcome unknown. The default timeout
// is 30 s ([DefaultTimeout]); a plan asking for more than the gateway's
// maximum ([DefaultMaxTimeout] unless configured) is refused with
// IllegalArgument. A repeated request whose first attempt was appended is
// not run again: it gets that attempt's outcome with Duplicate set, at
// PROCESSED, or, when it asks for a branch stage, once that stage is
// reached on the first attempt's stream (every consuming function's
// checkpoint past it, per [Progress]; a function's failure there fails the
// wait), so a retry's read-after-write holds like the first attempt's.
// Request IDs are per tenant: every answer built from a stored stream (the
// pre-check's duplicate, Lookup) is checked against the command's tenant
// first, and another tenant's stream is never one; Lookup answers it as a
// request never made. Failures are returned as a [Result] and as a
// [*ResultError] wrapping a *factum.Error, so callers read fields and match
// codes with errors.Is.
//
// The [Dispatcher] is the in-process Bus: lanes by aggregate, so one
// aggregate's commands take effect one after another in arrival order, with
// bounded queues (back-pressure or TooManyRequests). A lane hands an
// aggregate's queued commands to a [RunExecutor] as one run, which commits
// them together and answers each as one at a time would. Processors emit PROCESSED
// signals, and event functions branch signals, into a [Sink]; [Waiters] is
// the in-process one, routing by command ID. Every message involved (the
// command, the signal) is a plain serialisable value, so a networked bus
// and sink can replace the in-process ones.
package command
