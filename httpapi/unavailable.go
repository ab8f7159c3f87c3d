package httpapi

import (
	"errors"
	"net/http"
	"time"
)

// unavailable is an error that says a dependency the request needs is
// unreachable for now and when to try again: nats.UnavailableError, when
// the command bus cannot reach NATS or a partition's owner. Such an error
// is answered 503 with Retry-After, whatever its code (TooManyRequests).
type unavailable interface {
	error
	RetryAfter() time.Duration
}

// unavailableStatus returns 503 and sets Retry-After when err is, or
// wraps, an unavailable error; 0 otherwise.
func unavailableStatus(w http.ResponseWriter, err error) int {
	var u unavailable
	if !errors.As(err, &u) {
		return 0
	}
	w.Header().Set("Retry-After", retryAfter(u.RetryAfter()))
	return http.StatusServiceUnavailable
}
