package idempotency

import (
	"fmt"
	"unicode/utf8"

	"github.com/factum-go/factum"
)

// Limits on the parts of a key and on fingerprints, so that every backend
// can index them. Longer values are refused with ErrKeyInvalid or
// ErrFingerprintInvalid.
const (
	// MaxTenantLen bounds Key.Tenant, in bytes.
	MaxTenantLen = factum.MaxTenantLen
	// MaxOperationLen bounds Key.Operation, in bytes.
	MaxOperationLen = 256
	// MaxValueLen bounds Key.Value, in bytes (the length Stripe and most
	// HTTP APIs allow for an Idempotency-Key header).
	MaxValueLen = 255
	// MaxFingerprintLen bounds a fingerprint, in bytes.
	MaxFingerprintLen = 512
)

// Key identifies one operation. Tenant and Operation scope the client's
// Value, so the same value can never collide across tenants or APIs. Each
// part must be non-empty, valid UTF-8 without control characters, and
// within its length limit.
type Key struct {
	// Tenant owns the key.
	Tenant string
	// Operation names the API or job the key protects, such as
	// "POST /orders".
	Operation string
	// Value is the client-supplied key.
	Value string
}

// String formats the key as tenant/operation/value, for messages.
func (k Key) String() string { return k.Tenant + "/" + k.Operation + "/" + k.Value }

// Validate reports why k cannot be used: an error wrapping ErrKeyEmpty or
// ErrKeyInvalid that is also a factum IllegalArgument error. It returns nil
// for a usable key.
func (k Key) Validate() error {
	if k.Tenant == "" || k.Operation == "" || k.Value == "" {
		return factum.Errorf(factum.CodeIllegalArgument, "idempotency: tenant=%q operation=%q key=%q: %w",
			k.Tenant, k.Operation, k.Value, ErrKeyEmpty)
	}
	if err := checkText("tenant", k.Tenant, MaxTenantLen, ErrKeyInvalid); err != nil {
		return err
	}
	if err := checkText("operation", k.Operation, MaxOperationLen, ErrKeyInvalid); err != nil {
		return err
	}
	return checkText("key", k.Value, MaxValueLen, ErrKeyInvalid)
}

// ValidateFingerprint reports why fp cannot be used as a fingerprint: an
// error wrapping ErrFingerprintInvalid that is also a factum
// IllegalArgument error.
func ValidateFingerprint(fp string) error {
	if fp == "" {
		return factum.Errorf(factum.CodeIllegalArgument, "idempotency: empty fingerprint: %w", ErrFingerprintInvalid)
	}
	return checkText("fingerprint", fp, MaxFingerprintLen, ErrFingerprintInvalid)
}

// checkText refuses text a backend could not store as given: PostgreSQL's
// text type rejects NUL bytes and invalid UTF-8, and control characters in
// a key are always a client bug.
func checkText(what, s string, limit int, sentinel error) error {
	if len(s) > limit {
		return factum.Errorf(factum.CodeIllegalArgument, "idempotency: %s %.32q... is longer than %d bytes: %w", what, s, limit, sentinel)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return checkUTF8(what, s, i, sentinel) // rare: leave the ASCII fast path
		}
		if c < 0x20 || c == 0x7f {
			return factum.Errorf(factum.CodeIllegalArgument, "idempotency: %s %q: control character at byte %d: %w", what, s, i, sentinel)
		}
	}
	return nil
}

// checkUTF8 finishes checkText from byte from on, rune by rune.
func checkUTF8(what, s string, from int, sentinel error) error {
	for i, r := range s[from:] {
		if r == utf8.RuneError && !validRuneAt(s, from+i) {
			return factum.Errorf(factum.CodeIllegalArgument, "idempotency: %s %q is not valid UTF-8: %w", what, s, sentinel)
		}
		if r < 0x20 || r == 0x7f {
			return factum.Errorf(factum.CodeIllegalArgument, "idempotency: %s %q: control character at byte %d: %w", what, s, from+i, sentinel)
		}
	}
	return nil
}

// validRuneAt tells a genuine U+FFFD in s from the RuneError a range loop
// yields for an invalid byte.
func validRuneAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 3
}

func validate(k Key, fingerprint string) error {
	if err := k.Validate(); err != nil {
		return err
	}
	return ValidateFingerprint(fingerprint)
}

// OpError wraps err (one of the store's sentinel errors) with the
// operation and the key, in the form every backend reports them.
func OpError(op string, k Key, err error) error {
	return fmt.Errorf("idempotency: %s %s: %w", op, k, err)
}
