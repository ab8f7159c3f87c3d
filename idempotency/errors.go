package idempotency

import "errors"

// The errors of the store. Every error a Store returns for one of these
// reasons wraps the sentinel, so callers match with errors.Is; the message
// names the operation and the key.
var (
	// ErrConflict: the key is bound to another fingerprint, that is, a
	// client reused a key for a different request. The stored outcome is
	// never returned with it.
	ErrConflict = errors.New("idempotency: key reused with a different payload")
	// ErrInProgress: another attempt owns the key and its lease has not
	// expired. The caller should retry later.
	ErrInProgress = errors.New("idempotency: request already in progress")
	// ErrLeaseExpired: the record of the key vanished (its lease or its
	// retention ended) before the caller finished.
	ErrLeaseExpired = errors.New("idempotency: lease expired before completion")
	// ErrStaleAttempt: the caller's attempt no longer owns the key: another
	// attempt took it over after the lease expired, or this attempt
	// already finished it.
	ErrStaleAttempt = errors.New("idempotency: attempt no longer owns the key")
	// ErrKeyEmpty: the tenant, operation or value of a key is empty.
	ErrKeyEmpty = errors.New("idempotency: empty key component")
	// ErrKeyInvalid: a key component is too long, is not valid UTF-8 or
	// holds control characters.
	ErrKeyInvalid = errors.New("idempotency: invalid key component")
	// ErrFingerprintInvalid: the fingerprint is empty, too long, not valid
	// UTF-8 or holds control characters.
	ErrFingerprintInvalid = errors.New("idempotency: invalid fingerprint")
)
