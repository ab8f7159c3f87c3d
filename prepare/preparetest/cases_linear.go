package preparetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/factum-go/factum/internal/lincheck"
	"github.com/factum-go/factum/prepare"
)

// The size of the linearizability check: small enough for seconds per
// backend, large enough for reservations to lapse under contention every
// round.
const (
	linRounds  = 8
	linClients = 3 // per backend instance
	linOps     = 24
	linKeys    = pairKeys // per round
)

var linValues = []string{`"a"`, `"b"`, `"c"`}

// testLinearizable runs random concurrent histories of Prepare, Get,
// Rollback, RollbackValue, Reprepare and ChangeKey (where the backend has
// it) on a few keys from clients on two
// instances of the backend (one, for a backend without a second
// instance), with expiries short enough to lapse, and checks with
// porcupine that each key's history is linearizable against the
// contract's model, expiry included.
func testLinearizable(t *testing.T, e *env) {
	backends := []prepare.Backend{e.target.Backend}
	if e.target.Peer != nil {
		backends = append(backends, e.target.Peer)
	}
	now := func() int64 { return time.Now().UnixNano() }
	if c := e.target.Clock; c != nil {
		// Time moves by itself, a millisecond a millisecond.
		done := make(chan struct{})
		defer close(done)
		go func() {
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					c.Advance(time.Millisecond)
				}
			}
		}()
		now = func() int64 { return c.Now().UnixNano() }
	}
	name := e.key.Name()
	changes := true
	for _, b := range backends {
		if _, ok := b.(prepare.KeyChanger); !ok {
			changes = false
		}
	}
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		failure error
	)
	for round := range linRounds {
		var wg sync.WaitGroup
		for c := range 2 * linClients {
			wg.Go(func() {
				b := backends[c%len(backends)]
				rng := rand.New(rand.NewPCG(uint64(round), uint64(c)))
				for range linOps {
					in := prepInput{key: round*linKeys + rng.IntN(linKeys), value: linValues[rng.IntN(len(linValues))]}
					in.next = linValues[rng.IntN(len(linValues))]
					in.expiresAt = prepare.TTLForever
					if rng.IntN(4) != 0 {
						in.expiresAt = time.Unix(0, now()).Add(time.Duration(3+rng.IntN(30)) * time.Millisecond).UnixMilli()
					}
					switch r := rng.IntN(100); {
					case r < 30:
						in.op = prepPrepare
					case r < 55:
						in.op = prepGet
					case r < 72:
						in.op = prepReprepare
					case r < 88:
						in.op = prepRollbackValue
					case r < 93 || !changes:
						in.op = prepRollback
					default:
						in.op = prepChangeKey
					}
					key := fmt.Sprintf("lin-%d", in.key)
					var (
						out prepOutput
						rec prepare.Record
						err error
					)
					realCall := time.Now().UnixNano()
					in.call = now()
					switch in.op {
					case prepPrepare:
						out.ok, err = b.Prepare(e.ctx, name, key, []byte(in.value), in.expiresAt)
					case prepGet:
						rec, out.ok, err = b.Get(e.ctx, name, key)
					case prepRollback:
						out.ok, err = b.Rollback(e.ctx, name, key)
					case prepRollbackValue:
						out.ok, err = b.RollbackValue(e.ctx, name, key, []byte(in.value))
					case prepReprepare:
						out.ok, err = b.Reprepare(e.ctx, name, key, []byte(in.value), []byte(in.next), in.expiresAt)
					case prepChangeKey:
						other := fmt.Sprintf("lin-%d", in.key-in.key%pairKeys+(in.key+1)%pairKeys)
						out.ok, err = b.(prepare.KeyChanger).ChangeKey(e.ctx, name, key, []byte(in.value), other, []byte(in.next), in.expiresAt)
						if errors.Is(err, prepare.ErrNotHeld) {
							out.notHeld, err = true, nil
						}
					}
					in.ret = now()
					realRet := time.Now().UnixNano()
					if err != nil {
						mu.Lock()
						failure = fmt.Errorf("client %d: %s: %w", c, in.op, err)
						mu.Unlock()
						return
					}
					out.value, out.expiresAt, out.expired = string(rec.Value), rec.ExpiresAt, rec.Expired
					mu.Lock()
					// Porcupine orders operations by real time, which is exact; the
					// model judges expiry by the backend's clock (a manual
					// one moves in whole milliseconds), which follows real
					// time.
					history = append(history, porcupine.Operation{ClientId: c, Input: in, Call: realCall, Output: out, Return: realRet})
					mu.Unlock()
					time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
				}
			})
		}
		wg.Wait()
		if failure != nil {
			t.Fatal(failure)
		}
	}
	counts := map[string]int{}
	for _, op := range history {
		out := op.Output.(prepOutput)
		counts[fmt.Sprintf("%s=%v", op.Input.(prepInput).op, out.ok)]++
	}
	t.Logf("outcomes: %v", counts)
	lincheck.Check(t, prepareModel(e.target.DropsExpired), history)
}
