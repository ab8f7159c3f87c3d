package prepare

import (
	"math"
	"time"
)

// TTLForever is the expiry of a value that never expires. Use the constant;
// never copy its number.
const TTLForever int64 = math.MaxInt64

// MaxExpiry is the latest finite expiry a value may carry: the last
// millisecond of the year 9999 (UTC). Every backend stores it exactly.
const MaxExpiry int64 = 253402300799999

// PreparedValue is a value together with the absolute time at which its
// reservation lapses, in Unix milliseconds (UTC), or TTLForever.
//
// The zero ExpiresAt is not "forever" and is refused: say which one you mean
// with [Forever], [ExpiresAt] or [ExpiresIn].
type PreparedValue[V any] struct {
	// Value is the value the key is reserved for.
	Value V
	// ExpiresAt is the expiry in Unix milliseconds, or TTLForever.
	ExpiresAt int64
}

// Forever returns v reserved without expiry.
func Forever[V any](v V) PreparedValue[V] {
	return PreparedValue[V]{Value: v, ExpiresAt: TTLForever}
}

// ExpiresAt returns v reserved until t (truncated to the millisecond).
func ExpiresAt[V any](v V, t time.Time) PreparedValue[V] {
	return PreparedValue[V]{Value: v, ExpiresAt: t.UnixMilli()}
}

// ExpiresIn returns v reserved for d from now by the local clock. The
// backend judges expiry by its own clock (see its documentation), so a
// reservation is not a precise timer: allow for clock skew between this
// process and the backend.
func ExpiresIn[V any](v V, d time.Duration) PreparedValue[V] {
	return ExpiresAt(v, time.Now().Add(d))
}

// IsForever reports whether the value never expires.
func (p PreparedValue[V]) IsForever() bool { return p.ExpiresAt == TTLForever }

// ExpiredAt reports whether the reservation has lapsed at now. A value is
// live up to and including the millisecond ExpiresAt and expired after it,
// which is Redis's rule; every backend follows it.
func (p PreparedValue[V]) ExpiredAt(now time.Time) bool {
	return Expired(p.ExpiresAt, now.UnixMilli())
}

// Expired reports whether a reservation expiring at expiresAt has lapsed at
// nowMilli (both Unix milliseconds). Backends use it so that every one of
// them draws the line at the same millisecond.
func Expired(expiresAt, nowMilli int64) bool {
	return expiresAt != TTLForever && expiresAt < nowMilli
}

// Expiry returns the expiry as a time, and false for a value that never
// expires.
func (p PreparedValue[V]) Expiry() (time.Time, bool) {
	if p.ExpiresAt == TTLForever {
		return time.Time{}, false
	}
	return time.UnixMilli(p.ExpiresAt).UTC(), true
}
