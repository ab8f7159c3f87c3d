// Package saga defines stateless sagas: event functions that turn an event
// into commands for other aggregates.
//
// A saga does not make a distributed transaction: SAGA_HANDLED means the
// saga handled the event and the bus accepted the commands it produced, not
// that the target aggregates processed them. Delivery is at least once, so
// every command a saga sends carries a request ID derived from the event ID
// and the command's index: a redelivered event yields the same request IDs,
// and the target's event store refuses a second stream for them (the
// gateway answers the duplicate with the first attempt's outcome). The
// tenant of the source aggregate is carried to the commands, as is the
// stream's header.
package saga
