package preparetest

import (
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
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
)

func (o prepOp) String() string {
	return [...]string{"Prepare", "Get", "Rollback", "RollbackValue", "Reprepare"}[o]
}

type prepInput struct {
	op        prepOp
	key       int
	value     string // Prepare, RollbackValue, Reprepare's old value
	next      string // Reprepare's new value
	expiresAt int64  // Unix milliseconds or TTLForever
	call, ret int64  // Unix nanoseconds
}

type prepOutput struct {
	ok        bool // the boolean answer; for Get, found
	value     string
	expiresAt int64
	expired   bool
}

type prepState struct {
	has       bool
	value     string
	expiresAt int64
	low       int64
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
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[int][]porcupine.Operation{}
			var keys []int
			for _, op := range h {
				k := op.Input.(prepInput).key
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], op)
			}
			parts := make([][]porcupine.Operation, 0, len(keys))
			for _, k := range keys {
				parts = append(parts, byKey[k])
			}
			return parts
		},
		Init: func() any { return prepState{} },
		Step: func(state, input, output any) (bool, any) {
			return prepStep(state.(prepState), input.(prepInput), output.(prepOutput), dropsExpired)
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(prepInput), output.(prepOutput)
			return fmt.Sprintf("%s(%q, %q, %d) -> %v %q %d expired=%v", in.op, in.value, in.next, in.expiresAt,
				out.ok, out.value, out.expiresAt, out.expired)
		},
		DescribeState: func(state any) string {
			s := state.(prepState)
			if !s.has {
				return "absent"
			}
			return fmt.Sprintf("%q until %d", s.value, s.expiresAt)
		},
	}
}

func prepStep(s prepState, in prepInput, out prepOutput, dropsExpired bool) (bool, prepState) {
	p := max(s.low, in.call)
	lapse := lapseAt(s.expiresAt)
	// atLive and atFree pick the earliest instant from p on at which the
	// key is held (free), and report whether it lies inside the call.
	atLive := func() (int64, bool) { return p, s.has && p < lapse && p <= in.ret }
	atFree := func() (int64, bool) {
		q := p
		if s.has {
			q = max(q, lapse)
		}
		return q, q <= in.ret
	}
	held := func(v string) (int64, bool) {
		at, ok := atLive()
		return at, ok && s.value == v
	}
	// notHeld is the earliest instant at which the key is not held by v.
	notHeld := func(v string) (int64, bool) {
		if !s.has || s.value != v {
			return p, p <= in.ret
		}
		return atFree()
	}
	var (
		at int64
		ok bool
	)
	switch in.op {
	case prepPrepare:
		if out.ok {
			at, ok = atFree()
			s.has, s.value, s.expiresAt = true, in.value, in.expiresAt
		} else {
			at, ok = atLive()
		}
	case prepGet:
		switch {
		case !out.ok:
			// Nothing stored, or an expired record that was purged (or,
			// on a backend with native expiry, dropped).
			at, ok = atFree()
		case !out.expired:
			at, ok = held(out.value)
			ok = ok && out.expiresAt == s.expiresAt
		default:
			at, ok = atFree()
			ok = ok && !dropsExpired && s.has && s.value == out.value && s.expiresAt == out.expiresAt
		}
	case prepRollback:
		if out.ok {
			at, ok = atLive()
		} else {
			at, ok = atFree()
		}
		s.has = false
	case prepRollbackValue:
		if out.ok {
			at, ok = held(in.value)
			s.has = false
		} else {
			at, ok = notHeld(in.value)
		}
	case prepReprepare:
		if out.ok {
			at, ok = held(in.value)
			s.value, s.expiresAt = in.next, in.expiresAt
		} else {
			at, ok = notHeld(in.value)
		}
	}
	s.low = at
	return ok, s
}
