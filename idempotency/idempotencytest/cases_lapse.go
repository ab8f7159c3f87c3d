package idempotencytest

import (
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/kit"
)

// getResult is the outcome of one Get.
type getResult struct {
	rec   idempotency.Record
	found bool
	err   error
}

// testLapseThenLateWrite: an owner's Complete, Fail or Renew that is still
// waiting for the backend when its lease ends, and after a Get has
// reported the key free, is refused with ErrLeaseExpired: expiry is judged
// when the record is written, not when the call started. Where the harness
// can hold the backend's lock, the write waits on it while the lease ends
// and Get looks; otherwise the write comes after Get.
func testLapseThenLateWrite(t *testing.T, h Harness) {
	ops := []struct {
		name  string
		state idempotency.State // what the record is after the write
		do    func(f *fixture, s idempotency.Store, k idempotency.Key, attempt uint64) error
	}{
		{"complete", idempotency.StateDone, func(f *fixture, s idempotency.Store, k idempotency.Key, a uint64) error {
			return s.Complete(f.ctx, k, fp, a, []byte("late"))
		}},
		{"fail", idempotency.StateFailed, func(f *fixture, s idempotency.Store, k idempotency.Key, a uint64) error {
			return s.Fail(f.ctx, k, fp, a, false)
		}},
		{"renew", idempotency.StateInProgress, func(f *fixture, s idempotency.Store, k idempotency.Key, a uint64) error {
			_, err := s.Renew(f.ctx, k, fp, a)
			return err
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			lease := shortPeriod
			var clock *Clock
			newStore := h.New
			if h.NewClocked != nil {
				lease = time.Minute // of the manual clock
				clock = NewClock(time.Now())
				newStore = func(t *testing.T, p idempotency.Policy) idempotency.Store { return h.NewClocked(t, p, clock.Now) }
			}
			f := newFixture(t, newStore, lease, longPeriod)
			k := f.key("lapse-" + op.name)
			own := f.begin(k, fp)
			pass := func() {
				if clock != nil {
					clock.Advance(lease + time.Millisecond)
				} else {
					time.Sleep(time.Until(own.ExpiresAt.Add(settle - shortPeriod)))
				}
			}
			var hold func() func()
			if h.Hold != nil {
				hold = func() func() { return h.Hold(t, k) }
			}
			first, werr := kit.LateWrite(hold, pass, func() getResult {
				rec, found, err := f.s.Get(f.ctx, k)
				return getResult{rec, found, err}
			}, func() error { return op.do(f, f.s, k, own.Attempt) })
			if first.err != nil {
				t.Fatalf("Get: %v", first.err)
			}
			switch {
			case !first.found:
				// Someone saw the lease lapse: the old owner may no longer act.
				wantErr(t, "the old owner's "+op.name+" after Get saw the lease lapse", werr, idempotency.ErrLeaseExpired)
				if rec, found := f.get(k); found {
					t.Fatalf("the late %s left %+v", op.name, rec)
				}
			case werr != nil:
				t.Fatalf("Get after the lease found %+v, yet the %s was refused: %v", first.rec, op.name, werr)
			case first.rec.State != op.state || first.rec.Attempt != own.Attempt:
				t.Fatalf("Get after the lease found %+v; want the %s by attempt %d", first.rec, op.name, own.Attempt)
			}
			if errors.Is(werr, idempotency.ErrLeaseExpired) {
				if next := f.begin(k, fp); next.Attempt <= own.Attempt {
					t.Fatalf("attempt after the lapse %d not above %d", next.Attempt, own.Attempt)
				}
			}
		})
	}
}
