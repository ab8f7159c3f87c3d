package prepare

import (
	"context"
	"errors"
)

// Backend stores reservations as bytes. It is the small contract a storage
// adapter implements; applications use [Key], the front end, on top of it
// (as database/sql is over its driver): the Key checks the context,
// validates names, keys and expiries, encodes and decodes values, shapes
// the errors, and takes the optional fast path ([KeyChanger]) or its
// generic fallback, so a backend repeats none of that.
//
// Every method is atomic inside the backend (one command, one script, one
// statement or one transaction), never a read followed by a write in Go.
// Values are compared byte for byte. A record is live until the millisecond
// of its expiry has passed by the backend's clock (see [Expired]); an expired
// record counts as absent for every method except Get, which reports it with
// Expired set (or not at all, for backends that drop expired records).
//
// When a Key calls a method, ctx is live, name has passed
// [factum.ValidateName] and key [ValidateKey], and expiresAt is TTLForever
// or in 1..MaxExpiry. Implementations must honour ctx while they work.
type Backend interface {
	// Prepare stores value under (name, key) unless a live record is
	// there, and reports whether it did.
	Prepare(ctx context.Context, name, key string, value []byte, expiresAt int64) (bool, error)
	// Get returns the record under (name, key), live or expired, and
	// false when there is none.
	Get(ctx context.Context, name, key string) (Record, bool, error)
	// Rollback deletes the record under (name, key) and reports whether a
	// live one was deleted. An expired record may be deleted too; it does
	// not count.
	Rollback(ctx context.Context, name, key string) (bool, error)
	// RollbackValue deletes the record under (name, key) if it is live and
	// holds value, and reports whether it did.
	RollbackValue(ctx context.Context, name, key string, value []byte) (bool, error)
	// Reprepare replaces the live record holding oldValue under (name,
	// key) by newValue with the new expiry, and reports whether it did. It
	// never creates a record.
	Reprepare(ctx context.Context, name, key string, oldValue, newValue []byte, expiresAt int64) (bool, error)
}

// KeyChanger is the optional fast path of backends that move a reservation
// from one key to another in one atomic step. [Key.ChangeKey] uses it when
// the backend has it, and the compensating two-step of the specification
// otherwise; the contract kit (preparetest) runs its key-change cases over
// both.
type KeyChanger interface {
	// ChangeKey stores newValue under newKey and deletes oldKey, all or
	// nothing. When newKey holds a live record it returns false and changes
	// nothing; otherwise, when oldKey does not hold oldValue live, it
	// returns an error matching ErrNotHeld and changes nothing. oldKey and
	// newKey differ.
	ChangeKey(ctx context.Context, name, oldKey string, oldValue []byte, newKey string, newValue []byte, expiresAt int64) (bool, error)
}

// Record is one stored reservation.
type Record struct {
	// Value is the encoded value.
	Value []byte
	// ExpiresAt is the expiry in Unix milliseconds, or TTLForever.
	ExpiresAt int64
	// Expired reports that the expiry has passed by the backend's clock.
	Expired bool
}

// ErrNotHeld reports a key change whose old key is not held by the old
// value (absent, expired or holding another value). [Key.ChangeKey] returns
// it inside a *factum.Error of code IllegalState, so both
// errors.Is(err, ErrNotHeld) and errors.Is(err, factum.ErrIllegalState) hold.
var ErrNotHeld = errors.New("prepare: old key is not held by the old value")
