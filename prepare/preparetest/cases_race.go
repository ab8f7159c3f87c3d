package preparetest

import (
	"errors"
	"fmt"
	"sync"
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

func testConcurrentPrepare(t *testing.T, e *env) {
	for round := range 5 {
		key := fmt.Sprintf("contended-%d", round)
		var (
			mu      sync.Mutex
			winners []int
		)
		race(func(i int) {
			ok, err := e.key.Prepare(e.ctx, key, prepare.Forever(acct(fmt.Sprint(i))))
			if err != nil {
				t.Errorf("racer %d: %v", i, err)
				return
			}
			if ok {
				mu.Lock()
				winners = append(winners, i)
				mu.Unlock()
			}
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
		var (
			mu      sync.Mutex
			winners []int
		)
		race(func(i int) {
			ok, err := e.key.Reprepare(e.ctx, key, acct("v0"), prepare.Forever(acct(fmt.Sprint(i))))
			if err != nil {
				t.Errorf("racer %d: %v", i, err)
				return
			}
			if ok {
				mu.Lock()
				winners = append(winners, i)
				mu.Unlock()
			}
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
		var (
			mu                sync.Mutex
			changes, rollback int
		)
		race(func(i int) {
			var (
				ok  bool
				err error
			)
			switch i % 4 {
			case 0, 2:
				ok, err = e.key.ChangeKey(e.ctx, a, v.Value, b, moved)
				if errors.Is(err, prepare.ErrNotHeld) {
					err = nil
				}
			case 1:
				ok, err = e.key.RollbackValue(e.ctx, a, v.Value)
			case 3:
				ok, err = e.key.Rollback(e.ctx, a)
			}
			if err != nil {
				t.Errorf("round %d racer %d: %v", round, i, err)
				return
			}
			if ok {
				mu.Lock()
				if i%2 == 0 {
					changes++
				} else {
					rollback++
				}
				mu.Unlock()
			}
		})
		if changes+rollback != 1 {
			t.Fatalf("round %d: %d key changes and %d rollbacks succeeded; want exactly one success", round, changes, rollback)
		}
		e.wantFree(a)
		if changes == 1 {
			e.wantHeld(b, moved)
		} else {
			e.wantFree(b)
		}
	}
}
