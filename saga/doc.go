// Package saga defines stateless sagas: event functions that turn an event
// into commands for other aggregates.
//
// A saga does not make a distributed transaction, but it never loses a
// step: it sends its commands one after another and waits until each is
// decided (PROCESSED: appended, a repeat of an appended request, or
// refused) before the next, so its consumer moves past a stream only once
// every command it set off is durably decided. A refused command fails the
// saga function with a [RefusedError] carrying the refusal's code, and a
// command whose outcome is unknown (a timeout, a store blip) with a
// [PendingError]; the consumer then records the failure for compensation
// (retry, operator) like any other event function's, or delivers the
// stream again if it cannot. SAGA_HANDLED therefore means the saga handled
// the event and the targets accepted its commands; a failed send or a
// refused command is a failed SAGA_HANDLED, never Ok. It does not mean
// that what those commands set off in turn has finished. Delivery is at
// least once, so
// every command a saga sends carries a request ID derived from the event ID
// and the command's index: a redelivered event yields the same request IDs,
// and the target's event store refuses a second stream for them (the
// gateway answers the duplicate with the first attempt's outcome). The
// tenant of the source aggregate is carried to the commands, as is the
// stream's header.
//
// A saga is a definition: the engine builds its processor at New, bound to
// its codec registry and its gateway. [WithSettings] gives it consumer
// settings of its own and [WithMiddleware] middleware around its
// functions (see event.Middleware).
package saga
