package idempotency

import "context"

// Backend is what a storage technology implements to be an idempotency
// store: Store's methods, called by the front end ([Front]) only with a
// live context, a valid key and fingerprint (Key.Validate,
// ValidateFingerprint) and a non-zero attempt, so a backend repeats none
// of those checks. A backend reports a refusal with the package's
// sentinel errors (ErrConflict, ErrInProgress, ErrLeaseExpired,
// ErrStaleAttempt), bare or wrapped; the front end names the operation
// and the key in a bare one. The state machine's rules ([BeginExisting],
// [CheckOwner], [Refusal]) tell a backend which refusal applies.
type Backend interface {
	Store
}

// Front is the idempotency store's front end: the one implementation of
// the Store contract's checks over any [Backend], as database/sql is over
// its driver. It checks the context and the arguments before the backend
// sees them and shapes the backend's refusals. Backends apply it in their
// constructors ([NewMemory], sqlite.NewIdempotencyStore,
// postgres.NewIdempotencyStore, redis.NewIdempotencyStore return types
// that embed a Front), so users never meet the split. A Front is safe for
// concurrent use.
type Front struct{ b Backend }

// NewFront returns the front end over b.
func NewFront(b Backend) *Front { return &Front{b: b} }

// Backend returns the backend under the front end, for contract kits and
// diagnostics; calling it directly skips the front end's checks.
func (f *Front) Backend() Backend { return f.b }

// Begin implements Store.
func (f *Front) Begin(ctx context.Context, k Key, fingerprint string) (Record, bool, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, false, err
	}
	if err := validate(k, fingerprint); err != nil {
		return Record{}, false, err
	}
	rec, created, err := f.b.Begin(ctx, k, fingerprint)
	return rec, created, shape("begin", k, err)
}

// Complete implements Store.
func (f *Front) Complete(ctx context.Context, k Key, fingerprint string, attempt uint64, response []byte) error {
	if err := checkFinish(ctx, "complete", k, fingerprint, attempt); err != nil {
		return err
	}
	return shape("complete", k, f.b.Complete(ctx, k, fingerprint, attempt, response))
}

// Fail implements Store.
func (f *Front) Fail(ctx context.Context, k Key, fingerprint string, attempt uint64, retryable bool) error {
	if err := checkFinish(ctx, "fail", k, fingerprint, attempt); err != nil {
		return err
	}
	return shape("fail", k, f.b.Fail(ctx, k, fingerprint, attempt, retryable))
}

// Renew implements Store.
func (f *Front) Renew(ctx context.Context, k Key, fingerprint string, attempt uint64) (Record, error) {
	if err := checkFinish(ctx, "renew", k, fingerprint, attempt); err != nil {
		return Record{}, err
	}
	rec, err := f.b.Renew(ctx, k, fingerprint, attempt)
	return rec, shape("renew", k, err)
}

// Get implements Store.
func (f *Front) Get(ctx context.Context, k Key) (Record, bool, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, false, err
	}
	if err := k.Validate(); err != nil {
		return Record{}, false, err
	}
	rec, found, err := f.b.Get(ctx, k)
	return rec, found, shape("get", k, err)
}

// checkFinish checks the context and validates the arguments of Complete,
// Fail and Renew: a usable key and fingerprint and a non-zero attempt (no
// owner ever holds attempt 0, so it can only be a caller's bug).
func checkFinish(ctx context.Context, op string, k Key, fingerprint string, attempt uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := validate(k, fingerprint); err != nil {
		return err
	}
	if attempt == 0 {
		return OpError(op, k, ErrStaleAttempt)
	}
	return nil
}

// shape names the operation and the key in a bare sentinel refusal; any
// other error is the backend's, already saying what failed.
func shape(op string, k Key, err error) error {
	for _, s := range []error{ErrConflict, ErrInProgress, ErrLeaseExpired, ErrStaleAttempt} {
		if err == s {
			return OpError(op, k, err)
		}
	}
	return err
}

var _ Store = (*Front)(nil)
