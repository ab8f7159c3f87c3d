package prepare

import (
	"context"
	"errors"
	"fmt"
)

// UsingPrepare prepares key for v on k, hands the outcome to fn whatever it
// is (true: this call reserved the key; false: a live reservation holds it),
// and returns what fn returns.
//
// When this call reserved the key and fn fails, the reservation is released
// with the conditional rollback ([Key.RollbackValue], so a reservation made
// by someone else after an expiry is never touched). fn fails when it
// returns an error, when it panics (the panic then continues, after the
// release), and when ctx is done by the time it returns, even if fn itself
// returned nil: the caller has given up and will not act on the result, so
// UsingPrepare returns ctx's error. The release runs on a context that keeps
// ctx's values but not its cancellation, bounded to 10 s. The original error
// is returned, joined with the release's error if that failed too. When the
// prepare itself fails, fn is not called and its error is returned; its
// outcome in the backend is then unknown.
//
// In short: an error from UsingPrepare means the reservation made by this
// call, if any, has been released (or the error says why not); a nil error
// means it stands, with no end but its expiry.
//
// This is not a transaction with the event store, or with anything else.
// The usual caller is a command handler that reserves a username and then
// returns events that are appended after UsingPrepare has returned. If that
// append fails (a version conflict, a duplicate request, a crash), the
// reservation is still held: the caller must release it with
// [Key.RollbackValue] on that failure path, and, for permanent reservations,
// reconcile reservations against the event store after a crash (or reserve
// with an expiry and re-prepare it for good once the events are stored).
func UsingPrepare[V, R any](ctx context.Context, k *Key[V], key string, v PreparedValue[V], fn func(ctx context.Context, prepared bool) (R, error)) (result R, err error) {
	prepared, err := k.Prepare(ctx, key, v)
	if err != nil {
		return result, err
	}
	if !prepared {
		return fn(ctx, false)
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		// fn panicked (or called runtime.Goexit). Release without
		// recovering, so the panic keeps its value and stack; there is no
		// return value to carry a release error.
		_ = k.release(ctx, key, v.Value)
	}()
	result, err = fn(ctx, true)
	returned = true
	if err == nil && ctx.Err() != nil {
		var zero R
		result, err = zero, ctxError(ctx)
	}
	if err != nil {
		if rerr := k.release(ctx, key, v.Value); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return result, err
}

// release rolls back key if v still holds it, on a context that outlives
// ctx's cancellation.
func (k *Key[V]) release(ctx context.Context, key string, v V) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), compensationTimeout)
	defer cancel()
	if _, err := k.RollbackValue(rctx, key, v); err != nil {
		return fmt.Errorf("prepare %s: release %q after failure: %w", k.name, key, err)
	}
	return nil
}

// ctxError is ctx's error, with its cause when one was given.
func ctxError(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause != nil && cause != err {
		return fmt.Errorf("%w: %w", err, cause)
	}
	return err
}
