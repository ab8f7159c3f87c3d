package preparetest

import (
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/factum-go/factum/internal/lincheck"
	"github.com/factum-go/factum/prepare"
)

// The sequential specification of one reservation, written from the
// operation table of the prepare-key contract (seeds/prepare-key.zh.txt,
// prepare.Backend), for checking concurrent histories with porcupine.
//
// Time is part of it: a reservation is live until the millisecond of its
// expiry has passed, and each operation takes effect at one instant inside
// its call. The state carries the earliest instant the next operation may
// take effect at, and each step picks the earliest instant its outcome
// allows, which leaves the most room to every later step.

// prepOp names an operation of the model.
type prepOp int

const (
	prepPrepare prepOp = iota
	prepGet
	prepRollback
	prepRollbackValue
	prepReprepare
	prepChangeKey
)

func (o prepOp) String() string {
	return [...]string{"Prepare", "Get", "Rollback", "RollbackValue", "Reprepare", "ChangeKey"}[o]
}

// pairKeys is how many keys one partition of a history holds: a key change
// moves a reservation between the two keys of a pair.
const pairKeys = 2

type prepInput struct {
	op        prepOp
	key       int    // pair*pairKeys + slot; ChangeKey moves from this key to the pair's other one
	value     string // Prepare, RollbackValue, Reprepare's and ChangeKey's old value
	next      string // Reprepare's and ChangeKey's new value
	expiresAt int64  // Unix milliseconds or TTLForever
	call, ret int64  // Unix nanoseconds
}

type prepOutput struct {
	ok        bool // the boolean answer; for Get, found
	notHeld   bool // ChangeKey: ErrNotHeld
	value     string
	expiresAt int64
	expired   bool
}

type prepSlot struct {
	has       bool
	value     string
	expiresAt int64
}

type prepState struct {
	slots [pairKeys]prepSlot
	low   int64
}

// lapseAt is the first instant, in Unix nanoseconds, at which a
// reservation expiring at expiresAt is no longer live.
func lapseAt(expiresAt int64) int64 {
	if expiresAt == prepare.TTLForever || expiresAt >= math.MaxInt64/int64(time.Millisecond)-1 {
		return math.MaxInt64
	}
	return (expiresAt + 1) * int64(time.Millisecond)
}

// prepareModel is the model; dropsExpired is the target's DropsExpired.
func prepareModel(dropsExpired bool) porcupine.Model {
	return porcupine.Model{
		Partition: lincheck.PartitionBy(func(in any) int { return in.(prepInput).key / pairKeys }),
		Init:      func() any { return prepState{} },
		Step: func(state, input, output any) (bool, any) {
			return prepStep(state.(prepState), input.(prepInput), output.(prepOutput), dropsExpired)
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(prepInput), output.(prepOutput)
			return fmt.Sprintf("%s(key %d, %q, %q, %d) -> %v notHeld=%v %q %d expired=%v", in.op, in.key, in.value, in.next, in.expiresAt,
				out.ok, out.notHeld, out.value, out.expiresAt, out.expired)
		},
		DescribeState: func(state any) string {
			s := state.(prepState)
			var b []byte
			for i, sl := range s.slots {
				if !sl.has {
					b = fmt.Appendf(b, "[%d absent]", i)
				} else {
					b = fmt.Appendf(b, "[%d %q until %d]", i, sl.value, sl.expiresAt)
				}
			}
			return string(b)
		},
	}
}

func prepStep(s prepState, in prepInput, out prepOutput, dropsExpired bool) (bool, prepState) {
	p := max(s.low, in.call)
	slot := in.key % pairKeys
	// liveFrom and freeFrom are the instants from which slot i is live
	// (until it lapses) and free; live reports whether it is live at q.
	live := func(i int, q int64) bool { return s.slots[i].has && q < lapseAt(s.slots[i].expiresAt) }
	freeFrom := func(i int, q int64) int64 {
		if s.slots[i].has {
			return max(q, lapseAt(s.slots[i].expiresAt))
		}
		return q
	}
	atLive := func(i int) (int64, bool) { return p, live(i, p) && p <= in.ret }
	atFree := func(i int) (int64, bool) { q := freeFrom(i, p); return q, q <= in.ret }
	held := func(i int, v string) (int64, bool) {
		at, ok := atLive(i)
		return at, ok && s.slots[i].value == v
	}
	// notHeld is the earliest instant at which slot i is not held by v.
	notHeld := func(i int, v string) (int64, bool) {
		if !s.slots[i].has || s.slots[i].value != v {
			return p, p <= in.ret
		}
		return atFree(i)
	}
	cur := &s.slots[slot]
	var (
		at int64
		ok bool
	)
	switch in.op {
	case prepPrepare:
		if out.ok {
			at, ok = atFree(slot)
			*cur = prepSlot{true, in.value, in.expiresAt}
		} else {
			at, ok = atLive(slot)
		}
	case prepGet:
		switch {
		case !out.ok:
			// Nothing stored, or an expired record that was purged (or,
			// on a backend with native expiry, dropped).
			at, ok = atFree(slot)
		case !out.expired:
			at, ok = held(slot, out.value)
			ok = ok && out.expiresAt == cur.expiresAt
		default:
			at, ok = atFree(slot)
			ok = ok && !dropsExpired && cur.has && cur.value == out.value && cur.expiresAt == out.expiresAt
		}
	case prepRollback:
		if out.ok {
			at, ok = atLive(slot)
		} else {
			at, ok = atFree(slot)
		}
		cur.has = false
	case prepRollbackValue:
		if out.ok {
			at, ok = held(slot, in.value)
			cur.has = false
		} else {
			at, ok = notHeld(slot, in.value)
		}
	case prepReprepare:
		if out.ok {
			at, ok = held(slot, in.value)
			cur.value, cur.expiresAt = in.next, in.expiresAt
		} else {
			at, ok = notHeld(slot, in.value)
		}
	case prepChangeKey:
		other := (slot + 1) % pairKeys
		switch {
		case out.ok:
			// The new key free and the old one held by the old value, at
			// one instant.
			at = freeFrom(other, p)
			ok = at <= in.ret && live(slot, at) && cur.value == in.value
			s.slots[other] = prepSlot{true, in.next, in.expiresAt}
			cur.has = false
		case out.notHeld:
			// The new key free and the old one not held by the old value.
			at = freeFrom(other, p)
			if cur.has && cur.value == in.value {
				at = max(at, freeFrom(slot, p))
			}
			ok = at <= in.ret
		default:
			at, ok = atLive(other)
		}
	}
	s.low = at
	return ok, s
}
