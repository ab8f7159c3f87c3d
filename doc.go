// Package factum holds the shared vocabulary of the factum CQRS and
// event-sourcing framework: aggregate identities, commands, domain events and
// event streams, command stages, event-function identities, and the error
// model with its stable codes.
//
// Everything in this package is a plain, serialisable value. The packages
// that do work (aggregate, command, eventstore, event, snapshot, saga, ...)
// exchange these values, so that moving a part of the system from one process
// to many is a matter of configuration, not of rewriting contracts.
//
// Errors a caller can act on carry a [Code]. Match them with [errors.Is]
// against the Err* sentinels, or read the whole [*Error] with [errors.As]:
//
//	if errors.Is(err, factum.ErrDuplicateRequestID) { ... }
//	var fe *factum.Error
//	if errors.As(err, &fe) { log.Println(fe.Code, fe.Aggregate, fe.Version) }
package factum
