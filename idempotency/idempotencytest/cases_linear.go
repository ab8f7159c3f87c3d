package idempotencytest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/lincheck"
)

// The size of the linearizability check: small enough for seconds per
// backend, large enough for leases to lapse under contention every round.
const (
	linLease   = 25 * time.Millisecond
	linRounds  = 8
	linClients = 3  // per store instance
	linOps     = 24 // per client and round
	linKeys    = 2  // per round
)

// testLinearizable runs random concurrent histories of Begin, Complete,
// Fail, Renew and Get on a few keys from clients on two store instances,
// with a lease short enough to lapse, and checks with porcupine that each
// key's history is linearizable against the contract's model, expiry
// included.
func testLinearizable(t *testing.T, h Harness) {
	policy := idempotency.Policy{Lease: linLease, Retention: longPeriod}
	f := newFixture(t, h.New, policy.Lease, policy.Retention)
	stores := []idempotency.Store{f.s, h.New(t, policy)}
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		failure error
		maxSeen atomic.Uint64 // the highest attempt anyone was granted
	)
	keyOf := func(i int) idempotency.Key { return f.key(fmt.Sprintf("lin-%d", i)) }
	for round := range linRounds {
		var wg sync.WaitGroup
		for c := range 2 * linClients {
			wg.Go(func() {
				s := stores[c%2]
				rng := rand.New(rand.NewPCG(uint64(round), uint64(c)))
				owned := map[int]uint64{} // key -> attempt this client owns (or owned)
				for range linOps {
					key := round*linKeys + rng.IntN(linKeys)
					k := keyOf(key)
					fpr := fp
					if rng.IntN(10) == 0 {
						fpr = otherFP
					}
					in := linInput{key: key, fp: fpr}
					a, owns := owned[key]
					r := rng.IntN(100)
					switch {
					case owns && r < 25:
						in.kind, in.attempt, in.response = opComplete, a, fmt.Sprintf("r%d-%d", c, rng.IntN(1000))
					case owns && r < 35:
						in.kind, in.attempt = opFailRetryable, a
					case owns && r < 42:
						in.kind, in.attempt = opFail, a
					case owns && r < 62:
						in.kind, in.attempt = opRenew, a
					case owns && r < 70:
						delete(owned, key) // abandoned: its lease runs out
						in.kind = opGet
					case r < 45:
						in.kind = opBegin
					case r < 60:
						// An attempt that the next claim may be handing out
						// right now.
						in.kind, in.attempt, in.response = opComplete, maxSeen.Load()+1, "guess"
					default:
						in.kind = opGet
					}
					if in.kind != opBegin && in.kind != opGet && in.attempt == 0 {
						in.attempt = 1
					}
					out, err := linRun(f, s, k, &in)
					if err != nil {
						mu.Lock()
						failure = fmt.Errorf("client %d: %s: %w", c, in.kind, err)
						mu.Unlock()
						return
					}
					if in.kind == opBegin && out.created {
						owned[key] = out.attempt
						for m := maxSeen.Load(); m < out.attempt && !maxSeen.CompareAndSwap(m, out.attempt); m = maxSeen.Load() {
						}
					}
					mu.Lock()
					history = append(history, porcupine.Operation{ClientId: c, Input: in, Call: in.call, Output: out, Return: in.ret})
					mu.Unlock()
					time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
				}
			})
		}
		wg.Wait()
		if failure != nil {
			t.Fatal(failure)
		}
	}
	lincheck.Check(t, idempotencyModel(linLease), history)
}

// linRun performs in on s and returns what it answered; in gets its call
// and return times.
func linRun(f *fixture, s idempotency.Store, k idempotency.Key, in *linInput) (linOutput, error) {
	var (
		out linOutput
		rec idempotency.Record
		err error
	)
	in.call = time.Now().UnixNano()
	switch in.kind {
	case opBegin:
		rec, out.created, err = s.Begin(f.ctx, k, in.fp)
	case opComplete:
		err = s.Complete(f.ctx, k, in.fp, in.attempt, []byte(in.response))
	case opFail, opFailRetryable:
		err = s.Fail(f.ctx, k, in.fp, in.attempt, in.kind == opFailRetryable)
	case opRenew:
		rec, err = s.Renew(f.ctx, k, in.fp, in.attempt)
	case opGet:
		rec, out.found, err = s.Get(f.ctx, k)
	}
	in.ret = time.Now().UnixNano()
	o, known := classify(err)
	if !known {
		return out, err
	}
	out.out = o
	out.state, out.fp, out.attempt, out.response = rec.State, rec.Fingerprint, rec.Attempt, string(rec.Response)
	if !rec.ExpiresAt.IsZero() {
		out.expires = rec.ExpiresAt.UnixNano()
	}
	return out, nil
}
