// Package preparetest is the contract kit for prepare-key backends: every
// implementation of prepare.Backend, in factum or outside it, proves itself
// by calling [Run] from a test:
//
//	func TestContract(t *testing.T) {
//		preparetest.Run(t, func(t *testing.T) preparetest.Target {
//			clock := preparetest.NewClock(time.Now())
//			return preparetest.Target{Backend: prepare.NewMemory(prepare.MemoryConfig{Clock: clock.Now}), Clock: clock}
//		})
//	}
//
// The kit drives the backend through prepare.Key and covers every operation
// of the specification with its success and its false or error outcome:
// prepare, get (hiding expired values) and get-value (showing them),
// unconditional and conditional rollback, reprepare (never creating a key),
// key change (new key taken, old value not matching, same key), expiry and
// re-preparing an expired key, purging, UsingPrepare's release on error,
// panic and cancellation, bad input, cancelled contexts, and races: 64
// goroutines preparing one key, reprepares competing on one value, and key
// changes racing rollbacks with the invariant checked after every round.
//
// At the edges of expiry it checks that a late write of an old holder is
// refused once a Get has seen the reservation lapse (with the write held
// on the backend's own lock where [Target] offers Hold), and it checks
// random concurrent histories on two instances of the backend ([Target]
// Peer) for linearizability with porcupine, against a model written from
// the specification's operation table (key change included), time
// included.
//
// It never assumes that the backend is empty: each case uses key names of
// its own, so one backend may serve every case.
package preparetest
