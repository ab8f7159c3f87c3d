package idempotencytest

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/lincheck"
)

// The sequential specification of one key, written from the store's
// contract (seeds/idempotency-key-store.go.txt, idempotency.Store), for
// checking concurrent histories with porcupine.
//
// Time is part of it: a record is live strictly before its ExpiresAt, and
// each operation takes effect at one instant inside its call. The state
// carries the earliest instant the next operation may take effect at
// (operations take effect in the order porcupine tries, and time only
// moves forward), and each step picks the earliest instant its outcome
// allows, which leaves the most room to every later step. A write that
// reports a new lease (Begin, Renew) cannot have taken effect before the
// store read its clock for that lease (give or take clockSlack); it may
// take effect later, when it commits.

// opKind names an operation of the model.
type opKind int

const (
	opBegin opKind = iota
	opComplete
	opFail
	opFailRetryable
	opRenew
	opGet
)

func (k opKind) String() string {
	return [...]string{"Begin", "Complete", "Fail", "FailRetryable", "Renew", "Get"}[k]
}

// outcome names the error classes of the contract.
type outcome int

const (
	outOK outcome = iota
	outConflict
	outInProgress
	outLeaseExpired
	outStale
)

func (o outcome) String() string {
	return [...]string{"ok", "conflict", "in progress", "lease expired", "stale"}[o]
}

func classify(err error) (outcome, bool) {
	switch {
	case err == nil:
		return outOK, true
	case errors.Is(err, idempotency.ErrConflict):
		return outConflict, true
	case errors.Is(err, idempotency.ErrInProgress):
		return outInProgress, true
	case errors.Is(err, idempotency.ErrLeaseExpired):
		return outLeaseExpired, true
	case errors.Is(err, idempotency.ErrStaleAttempt):
		return outStale, true
	}
	return 0, false
}

// never is the expiry the model gives finished records: the history is
// far shorter than the retention it runs with.
const never = math.MaxInt64

// clockSlack is how far a store's clock reading may lie from this
// process's: they read one machine's clock, but Redis keeps milliseconds
// and SQL stores microseconds.
const clockSlack = int64(2 * time.Millisecond)

type linInput struct {
	kind      opKind
	key       int
	fp        string
	attempt   uint64
	response  string
	call, ret int64 // Unix nanoseconds
}

type linOutput struct {
	out      outcome
	created  bool
	found    bool
	state    idempotency.State
	fp       string
	attempt  uint64
	expires  int64 // Unix nanoseconds
	response string
}

type linState struct {
	has        bool
	state      idempotency.State
	fp         string
	attempt    uint64
	expires    int64
	response   string
	maxAttempt uint64
	low        int64
}

// idempotencyModel is the model for stores with the given lease.
func idempotencyModel(lease time.Duration) porcupine.Model {
	return porcupine.Model{
		Partition: lincheck.PartitionBy(func(in any) int { return in.(linInput).key }),
		Init:      func() any { return linState{} },
		Step: func(state, input, output any) (bool, any) {
			return step(state.(linState), input.(linInput), output.(linOutput), int64(lease))
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(linInput), output.(linOutput)
			return fmt.Sprintf("%s(%s, attempt %d) -> %s created=%v found=%v %s/%d exp=%d", in.kind, in.fp, in.attempt,
				out.out, out.created, out.found, out.state, out.attempt, out.expires)
		},
		DescribeState: func(state any) string {
			s := state.(linState)
			if !s.has {
				return fmt.Sprintf("absent (max attempt %d)", s.maxAttempt)
			}
			return fmt.Sprintf("%s %s attempt %d until %d", s.state, s.fp, s.attempt, s.expires)
		},
	}
}

// step applies one operation to s and reports whether its outcome is one
// the contract allows.
func step(s linState, in linInput, out linOutput, lease int64) (bool, linState) {
	p := max(s.low, in.call)
	live := func(at int64) bool { return s.has && at < s.expires }
	// atLive and atAbsent pick the earliest instant from p on at which the
	// record is live (absent), and report whether it lies inside the call.
	atLive := func() (int64, bool) { return p, p <= in.ret && live(p) }
	atAbsent := func() (int64, bool) {
		q := p
		if s.has {
			q = max(q, s.expires)
		}
		return q, q <= in.ret
	}
	// pinned bounds the instant of a write that reported a lease ending at
	// expires: no earlier than the store's reading of its clock for that
	// lease. It may take effect later, when the write commits.
	pinned := func(expires int64) (lo, hi int64) {
		return max(p, expires-lease-clockSlack), in.ret
	}
	owned := func() bool {
		return s.state == idempotency.StateInProgress && s.fp == in.fp && s.attempt == in.attempt
	}
	refuse := func() (bool, linState) {
		var at int64
		var ok bool
		switch out.out {
		case outLeaseExpired:
			at, ok = atAbsent()
		case outConflict:
			at, ok = atLive()
			ok = ok && s.fp != in.fp
		case outStale:
			at, ok = atLive()
			ok = ok && s.fp == in.fp && !owned()
		default:
			return false, s
		}
		if !ok {
			return false, s
		}
		s.low = at
		return true, s
	}
	switch in.kind {
	case opBegin:
		switch {
		case out.created && out.out == outOK:
			lo, hi := pinned(out.expires)
			if s.has && !(s.state == idempotency.StateRetryable && s.fp == in.fp) {
				lo = max(lo, s.expires) // the record must have lapsed
			}
			if lo > hi || out.attempt <= s.maxAttempt {
				return false, s
			}
			return true, linState{has: true, state: idempotency.StateInProgress, fp: in.fp, attempt: out.attempt,
				expires: out.expires, maxAttempt: out.attempt, low: lo}
		case out.out == outConflict:
			return refuse()
		case out.out == outInProgress:
			at, ok := atLive()
			if !ok || s.state != idempotency.StateInProgress || s.fp != in.fp || out.attempt != s.attempt || out.expires != s.expires {
				return false, s
			}
			s.low = at
			return true, s
		case out.out == outOK:
			at, ok := atLive()
			if !ok || s.fp != in.fp || (s.state != idempotency.StateDone && s.state != idempotency.StateFailed) ||
				out.state != s.state || out.attempt != s.attempt || out.response != s.response {
				return false, s
			}
			s.low = at
			return true, s
		}
		return false, s
	case opComplete, opFail, opFailRetryable:
		if out.out != outOK {
			return refuse()
		}
		at, ok := atLive()
		if !ok || !owned() {
			return false, s
		}
		s.low, s.expires, s.response = at, never, ""
		switch in.kind {
		case opComplete:
			s.state, s.response = idempotency.StateDone, in.response
		case opFail:
			s.state = idempotency.StateFailed
		default:
			s.state = idempotency.StateRetryable
		}
		return true, s
	case opRenew:
		if out.out != outOK {
			return refuse()
		}
		lo, hi := pinned(out.expires)
		if lo > hi || !live(lo) || !owned() {
			return false, s
		}
		s.low, s.expires = lo, out.expires
		return true, s
	case opGet:
		if !out.found {
			at, ok := atAbsent()
			s.low = at
			return ok, s
		}
		at, ok := atLive()
		if !ok || out.state != s.state || out.fp != s.fp || out.attempt != s.attempt || out.response != s.response ||
			(s.state == idempotency.StateInProgress && out.expires != s.expires) {
			return false, s
		}
		s.low = at
		return true, s
	}
	return false, s
}
