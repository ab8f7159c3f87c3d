// Package idempotencytest is the contract kit of idempotency.Store: the
// tests every backend, factum's or yours, must pass.
//
// Call Run from a test with a function that builds a store with a given
// policy. The kit uses the real clock, short leases and short retention
// periods, and sleeps through them, so a whole run takes a few seconds; run
// it under -race. Every case uses keys of its own, so the stores may share
// one database or Redis server.
//
//	func TestContract(t *testing.T) {
//		idempotencytest.Run(t, func(t *testing.T, p idempotency.Policy) idempotency.Store {
//			s, err := mybackend.New(p)
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// [RunHarness] takes a [Harness] instead, with the powers a backend can
// grant beyond the Store interface: NewClocked builds stores on a manual
// [Clock], so cases move through leases without sleeping, and Hold takes
// the backend's own lock, so a case can make a write wait while a lease
// lapses and others act. With them the kit checks the edges: owners
// taking a key over and over from two store instances, with a claimer
// held on the lock, get attempts (fencing tokens) strictly rising in the
// order they owned the key; a late Complete, Fail or Renew of an old owner
// is refused once a Get has seen its lease lapse; failed and retryable
// records are kept for the retention window, then forgotten; and random
// concurrent histories on two instances are linearizable, checked with
// porcupine against a model written from the store's contract, time
// included.
package idempotencytest
