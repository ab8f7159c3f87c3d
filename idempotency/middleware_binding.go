package idempotency

import (
	"context"

	"github.com/factum-go/factum"
)

type keyContextKey struct{}

func withKey(ctx context.Context, k Key) context.Context {
	return context.WithValue(ctx, keyContextKey{}, k)
}

// KeyFromContext returns the key of the request the Middleware is running
// the handler for, and whether there is one. A handler uses it to bind the
// work it starts to the key, so that a retry with the same key is
// recognised downstream even when the middleware could not record an
// outcome (RequestID).
func KeyFromContext(ctx context.Context) (Key, bool) {
	k, ok := ctx.Value(keyContextKey{}).(Key)
	return k, ok
}

// RequestID returns the request ID bound to k: a UUIDv5 of the key's
// tenant, operation and value, the same for every attempt made with the
// key. Package httpapi sends a command carrying an Idempotency-Key and no
// Command-Request-Id with this request ID, so the event store's request-ID
// de-duplication is a second fence behind the key: an attempt whose
// outcome the key could not record (a wait that timed out answers 408,
// which releases the key, bound to its payload, for a retry) is found by
// the retry instead of being run again.
func RequestID(k Key) string {
	return factum.DeriveID("idempotency", k.Tenant, k.Operation, k.Value)
}
