package preparetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum/prepare"
)

// racers is how many goroutines race in each concurrency case.
const racers = 64

// race runs fn(i) for i in [0, racers) on as many goroutines, released
// together.
func race(fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}

// raceWinners races the racers through try, in round, and returns those
// it reported true for. A racer's error fails the test.
func raceWinners(t *testing.T, round int, try func(i int) (bool, error)) []int {
	var (
		mu      sync.Mutex
		winners []int
	)
	race(func(i int) {
		ok, err := try(i)
		if err != nil {
			t.Errorf("round %d racer %d: %v", round, i, err)
			return
		}
		if ok {
			mu.Lock()
			winners = append(winners, i)
			mu.Unlock()
		}
	})
	return winners
}

func testConcurrentPrepare(t *testing.T, e *env) {
	for round := range 5 {
		key := fmt.Sprintf("contended-%d", round)
		winners := raceWinners(t, round, func(i int) (bool, error) {
			return e.key.Prepare(e.ctx, key, prepare.Forever(acct(fmt.Sprint(i))))
		})
		if len(winners) != 1 {
			t.Fatalf("round %d: %d racers prepared the key (%v), want exactly 1", round, len(winners), winners)
		}
		e.wantHeld(key, prepare.Forever(acct(fmt.Sprint(winners[0]))))
	}
}

func testConcurrentReprepare(t *testing.T, e *env) {
	for round := range 5 {
		key := fmt.Sprintf("cas-%d", round)
		e.mustPrepare(key, prepare.Forever(acct("v0")))
		winners := raceWinners(t, round, func(i int) (bool, error) {
			return e.key.Reprepare(e.ctx, key, acct("v0"), prepare.Forever(acct(fmt.Sprint(i))))
		})
		if len(winners) != 1 {
			t.Fatalf("round %d: %d racers replaced v0 (%v), want exactly 1", round, len(winners), winners)
		}
		e.wantHeld(key, prepare.Forever(acct(fmt.Sprint(winners[0]))))
	}
}

// testConcurrentChangeAndRollback races, in each round, key changes of A
// (held by v) to B against rollbacks of A, conditional and unconditional.
//
// The invariant, checked after every round: the reservation of A by v is
// consumed exactly once. Exactly one operation succeeds; if it is a key
// change, A is free and B is held by the changed value; if it is a
// rollback, both A and B are free (no key change may leave B held once it
// lost A, nor A held once it took B). Losing key changes see B taken
// (false) or A not held (ErrNotHeld); losing rollbacks see false; nothing
// else is returned.
func testConcurrentChangeAndRollback(t *testing.T, e *env) {
	v := prepare.Forever(acct("v"))
	moved := prepare.Forever(account{ID: "v", Tags: map[string]int{"moved": 1}})
	for round := range 10 {
		a, b := fmt.Sprintf("A-%d", round), fmt.Sprintf("B-%d", round)
		e.mustPrepare(a, v)
		winners := raceWinners(t, round, func(i int) (bool, error) {
			switch i % 4 {
			case 0, 2:
				ok, err := e.key.ChangeKey(e.ctx, a, v.Value, b, moved)
				if errors.Is(err, prepare.ErrNotHeld) {
					err = nil
				}
				return ok, err
			case 1:
				return e.key.RollbackValue(e.ctx, a, v.Value)
			default:
				return e.key.Rollback(e.ctx, a)
			}
		})
		changes := 0
		for _, i := range winners {
			if i%2 == 0 {
				changes++
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d key changes and %d rollbacks succeeded; want exactly one success", round, changes, len(winners)-changes)
		}
		e.wantFree(a)
		if changes == 1 {
			e.wantHeld(b, moved)
		} else {
			e.wantFree(b)
		}
	}
}

// testConcurrentKeyChanges moves two values around three keys from 64
// goroutines at once, in every direction. Each key change moves a value
// atomically or does nothing, so at the end each value is held by exactly
// one key and the third key is free: none is lost, none duplicated. It
// also catches lock-ordering deadlocks between changes in opposite
// directions.
func testConcurrentKeyChanges(t *testing.T, e *env) {
	keys := []string{"ring-a", "ring-b", "ring-c"}
	vals := []prepare.PreparedValue[account]{prepare.Forever(acct("v1")), prepare.Forever(acct("v2"))}
	e.mustPrepare(keys[0], vals[0])
	e.mustPrepare(keys[1], vals[1])
	var moves atomic.Int64
	race(func(i int) {
		for j := range 8 {
			from := (i + j) % 3
			to := (from + 1 + (i/3+j)%2) % 3
			v := vals[(i+j/2)%2]
			ok, err := e.key.ChangeKey(e.ctx, keys[from], v.Value, keys[to], v)
			if err != nil && !errors.Is(err, prepare.ErrNotHeld) {
				t.Errorf("racer %d: ChangeKey %s -> %s: %v", i, keys[from], keys[to], err)
				return
			}
			if ok {
				moves.Add(1)
			}
		}
	})
	holders := map[string]int{}
	for _, k := range keys {
		got, ok, err := e.key.Get(e.ctx, k)
		if err != nil {
			t.Fatalf("Get(%q): %v", k, err)
		}
		if ok {
			holders[got.Value.ID]++
		}
	}
	if holders["v1"] != 1 || holders["v2"] != 1 || len(holders) != 2 {
		t.Fatalf("after %d moves the keys hold %v; want v1 and v2 once each", moves.Load(), holders)
	}
	t.Logf("%d successful moves", moves.Load())
}

// testOpposingChangesOfLapsedKeys: key changes in opposite directions
// between two keys whose reservations have lapsed each find their new key
// free and take it before they find their old key not held, so each locks
// one key and then reaches for the other: the backend must order its locks
// (or serialise such changes) instead of failing some with a deadlock.
// No change applies: each reports ErrNotHeld, or false where the
// compensating two-step briefly held its new key for another change; and
// both keys stay free.
func testOpposingChangesOfLapsedKeys(t *testing.T, e *env) {
	keys := []string{"swap-a", "swap-b"}
	v := e.expiresSoon(acct("lapsing"))
	for _, k := range keys {
		e.mustPrepare(k, v)
	}
	e.passExpiry(v.ExpiresAt)
	race(func(i int) {
		for j := range 6 {
			from := (i + j) % 2
			ok, err := e.key.ChangeKey(e.ctx, keys[from], v.Value, keys[1-from], prepare.Forever(acct("mover")))
			if ok || err != nil && !errors.Is(err, prepare.ErrNotHeld) {
				t.Errorf("racer %d: ChangeKey %s -> %s of a lapsed reservation = %v, %v; want ErrNotHeld or false",
					i, keys[from], keys[1-from], ok, err)
				return
			}
		}
	})
	for _, k := range keys {
		e.wantFree(k)
	}
}
