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
package idempotencytest
