package prepare

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
)

// ErrTaken is the cause of the IllegalState error an effect's Apply
// returns when the key it reserves is held for another value.
var ErrTaken = errors.New("prepare: key is held for another value")

// Effect is one reservation change on a Key, made by [Key.Reserve],
// [Key.Release] or [Key.Change] for a command handler to bind to its
// command's append (aggregate.Bind): the aggregate processor applies it
// before the append, undoes it if the append fails or is retried, and keeps
// it once the stream is appended. It satisfies aggregate.Effect.
//
// The value is the owner: an Apply that finds the change already made for
// the same value (a retry of the same command, after a crash between its
// reservation and its append) reports applied=false and lets the command
// go on, instead of calling the key taken; such a change is then not
// undone by this attempt. Values are compared by their JSON encoding, as
// everywhere on a Key.
type Effect struct {
	apply func(ctx context.Context) (bool, error)
	undo  func(ctx context.Context) error
	taken error
}

// IfTaken sets the error Apply returns when the key is held for another
// value (by default an IllegalState error wrapping ErrTaken), so that a
// handler refuses in its own words. It returns e.
func (e *Effect) IfTaken(err error) *Effect {
	e.taken = err
	return e
}

// Apply makes the change; see Effect.
func (e *Effect) Apply(ctx context.Context) (bool, error) { return e.apply(ctx) }

// Undo reverses an Apply that reported true.
func (e *Effect) Undo(ctx context.Context) error { return e.undo(ctx) }

func (e *Effect) takenError(k string, name string) error {
	if e.taken != nil {
		return e.taken
	}
	return factum.Errorf(factum.CodeIllegalState, "prepare %s: key %q: %w", name, k, ErrTaken)
}

// holds reports whether key's live reservation is v.
func (k *Key[V]) holds(ctx context.Context, key string, v V) (bool, error) {
	r, ok, err := k.get(ctx, key)
	if err != nil || !ok || r.Expired {
		return false, err
	}
	b, err := k.encode(v)
	if err != nil {
		return false, err
	}
	return bytes.Equal(r.Value, b), nil
}

// Reserve returns the effect that reserves key for v (Prepare). Apply
// fails with the taken error when a live reservation for another value
// holds key, and reports false when one for v does. Undo releases key if v
// still holds it.
func (k *Key[V]) Reserve(key string, v PreparedValue[V]) *Effect {
	e := &Effect{}
	e.apply = func(ctx context.Context) (bool, error) {
		ok, err := k.Prepare(ctx, key, v)
		if err != nil || ok {
			return ok, err
		}
		mine, err := k.holds(ctx, key, v.Value)
		switch {
		case err != nil:
			return false, err
		case mine:
			return false, nil
		}
		return false, e.takenError(key, k.name)
	}
	e.undo = func(ctx context.Context) error {
		_, err := k.RollbackValue(ctx, key, v.Value)
		return err
	}
	return e
}

// Release returns the effect that releases key from v (RollbackValue).
// Apply reports false when v does not hold key (released already). Undo
// reserves key for v again, with v's expiry; it fails if another value
// took key in between.
func (k *Key[V]) Release(key string, v PreparedValue[V]) *Effect {
	e := &Effect{}
	e.apply = func(ctx context.Context) (bool, error) {
		return k.RollbackValue(ctx, key, v.Value)
	}
	e.undo = func(ctx context.Context) error {
		ok, err := k.Prepare(ctx, key, v)
		if err == nil && !ok {
			err = fmt.Errorf("prepare %s: restore %q: %w", k.name, key, ErrTaken)
		}
		return err
	}
	return e
}

// Change returns the effect that moves the reservation of old from oldKey
// to newKey, reserved for next (ChangeKey: a rename). Apply fails with the
// taken error when newKey is held for another value, and with ChangeKey's
// IllegalState error when oldKey is not held by old; it reports false when
// it finds the move made already (newKey held by next, oldKey no longer by
// old). Undo moves the reservation back to oldKey, with old's expiry.
func (k *Key[V]) Change(oldKey string, old PreparedValue[V], newKey string, next PreparedValue[V]) *Effect {
	e := &Effect{}
	moved := func(ctx context.Context) (bool, error) {
		mine, err := k.holds(ctx, newKey, next.Value)
		if err != nil || !mine {
			return false, err
		}
		still, err := k.holds(ctx, oldKey, old.Value)
		return !still, err
	}
	e.apply = func(ctx context.Context) (bool, error) {
		ok, err := k.ChangeKey(ctx, oldKey, old.Value, newKey, next)
		if ok {
			return true, nil
		}
		done, merr := moved(ctx)
		switch {
		case merr != nil:
			return false, errors.Join(err, merr)
		case done:
			return false, nil
		case err != nil:
			return false, err
		}
		return false, e.takenError(newKey, k.name)
	}
	e.undo = func(ctx context.Context) error {
		ok, err := k.ChangeKey(ctx, newKey, next.Value, oldKey, old)
		if err == nil && !ok {
			err = fmt.Errorf("prepare %s: move %q back to %q: %w", k.name, newKey, oldKey, ErrTaken)
		}
		return err
	}
	return e
}
