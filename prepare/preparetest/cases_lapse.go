package preparetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/factum-go/factum/internal/kit"
	"github.com/factum-go/factum/prepare"
)

// backendGet is the outcome of one Backend.Get.
type backendGet struct {
	rec   prepare.Record
	found bool
	err   error
}

// live reports whether the Get saw a live reservation.
func (g backendGet) live() bool { return g.found && !g.rec.Expired }

// testLapseThenLateWrite: a Reprepare, RollbackValue, Rollback or key
// change by the old holder that is still waiting for the backend when the
// reservation lapses, and after a Get has reported the key free, is
// refused: expiry is judged when the record is written, not when the call
// started. Where the target can hold the backend's lock, the write waits
// on it while the reservation lapses and Get looks; otherwise the write
// comes after Get.
func testLapseThenLateWrite(t *testing.T, e *env) {
	b := e.target.Backend
	name := e.key.Name()
	old, next := []byte(`{"id":"old"}`), []byte(`{"id":"next"}`)
	ops := []struct {
		name string
		// do performs the late write and reports whether it applied.
		do func(key string) (bool, error)
		// after is what Get must find when the write applied.
		after []byte
	}{
		{"reprepare", func(key string) (bool, error) {
			return b.Reprepare(e.ctx, name, key, old, next, prepare.TTLForever)
		}, next},
		{"rollback value", func(key string) (bool, error) { return b.RollbackValue(e.ctx, name, key, old) }, nil},
		{"rollback", func(key string) (bool, error) { return b.Rollback(e.ctx, name, key) }, nil},
		{"change key", func(key string) (bool, error) {
			ok, err := b.(prepare.KeyChanger).ChangeKey(e.ctx, name, key, old, key+"-moved", next, prepare.TTLForever)
			if errors.Is(err, prepare.ErrNotHeld) {
				return false, nil
			}
			return ok, err
		}, nil},
	}
	if _, ok := b.(prepare.KeyChanger); !ok {
		ops = ops[:len(ops)-1] // no atomic key change to try; Key's two steps are the others
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			key := "lapse-" + op.name
			expiresAt := e.now().Add(e.shortTTL()).UnixMilli()
			if ok, err := b.Prepare(e.ctx, name, key, old, expiresAt); err != nil || !ok {
				t.Fatalf("Prepare = %v, %v", ok, err)
			}
			var hold func() func()
			if e.target.Hold != nil {
				hold = func() func() { return e.target.Hold(t, name, key) }
			}
			type result struct {
				ok  bool
				err error
			}
			first, w := kit.LateWrite(hold, func() { e.passExpiry(expiresAt) }, func() backendGet {
				rec, found, err := b.Get(e.ctx, name, key)
				return backendGet{rec, found, err}
			}, func() result {
				ok, err := op.do(key)
				return result{ok, err}
			})
			applied, werr := w.ok, w.err
			if first.err != nil || werr != nil {
				t.Fatalf("Get: %v; the late %s: %v", first.err, op.name, werr)
			}
			// Get saw the lapse if it found the record expired, or found
			// nothing before the write could have deleted it.
			lapsed := first.found && first.rec.Expired ||
				!first.found && (e.target.Hold == nil || op.after != nil)
			switch {
			case lapsed && applied:
				t.Fatalf("Get reported the reservation lapsed (%+v, found %v), then the old holder's %s applied", first.rec, first.found, op.name)
			case first.live() && (!applied || !bytes.Equal(first.rec.Value, op.after)):
				t.Fatalf("Get after the expiry found %q live; want only the outcome of an applied %s (applied %v)", first.rec.Value, op.name, applied)
			}
			if !applied {
				// The key is free: anyone may take it.
				if ok, err := b.Prepare(e.ctx, name, key, next, prepare.TTLForever); err != nil || !ok {
					t.Fatalf("Prepare after the lapse = %v, %v", ok, err)
				}
			}
		})
	}
}
