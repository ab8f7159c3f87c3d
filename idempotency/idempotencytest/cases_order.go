package idempotencytest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
)

// tenure is the part of one owner's ownership the test saw for certain:
// from its Begin's return to the call of the Fail that released the key.
type tenure struct {
	attempt  uint64
	from, to time.Time
	store    int
}

// testTakeoverOrder: many goroutines on two store instances take one key
// over and over, each owner releasing it (or, with a short lease, some
// abandoning it), while a slow claimer is made to wait on the backend's
// lock where the harness allows. Owners never overlap, and their attempts
// rise strictly in the order they owned the key: the attempt is a fencing
// token handed out when the key is claimed, not when a claim starts.
func testTakeoverOrder(t *testing.T, h Harness) {
	for _, v := range []struct {
		name    string
		lease   time.Duration
		abandon int // every abandon-th owner lets its lease run out; 0: none
		grants  int64
	}{
		{"released", longPeriod, 0, 80},
		{"expired", 100 * time.Millisecond, 3, 30},
	} {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, h.New, v.lease, longPeriod)
			stores := []idempotency.Store{f.s, h.New(t, idempotency.Policy{Lease: v.lease, Retention: longPeriod})}
			k := f.key("order-" + v.name)
			first := f.begin(k, fp)
			if err := f.s.Fail(f.ctx, k, fp, first.Attempt, true); err != nil {
				t.Fatal(err)
			}
			var (
				mu      sync.Mutex
				seen    []tenure
				errs    []error
				granted atomic.Int64
				wg      sync.WaitGroup
				done    = make(chan struct{})
			)
			// The run stops at grants owners or at the deadline, whichever
			// comes first: a backend whose waiters back off (SQLite's busy
			// handler) grants slowly while the lock is held, and a loaded
			// machine slows every backend.
			deadline := time.Now().Add(15 * time.Second)
			if h.Hold != nil {
				wg.Go(func() {
					for {
						select {
						case <-done:
							return
						case <-time.After(40 * time.Millisecond):
						}
						release := h.Hold(t, k)
						time.Sleep(20 * time.Millisecond) // claimers pile up behind the lock
						release()
					}
				})
			}
			const workers = 12
			var claimers sync.WaitGroup
			for w := range workers {
				claimers.Go(func() {
					s := stores[w%2]
					for n := 0; granted.Load() < v.grants && time.Now().Before(deadline); n++ {
						rec, created, err := s.Begin(f.ctx, k, fp)
						from := time.Now()
						switch {
						case errors.Is(err, idempotency.ErrInProgress):
							time.Sleep(time.Duration(1+n%3) * 200 * time.Microsecond)
							continue
						case err != nil || !created:
							mu.Lock()
							errs = append(errs, fmt.Errorf("begin = %+v, created %v, %v", rec, created, err))
							mu.Unlock()
							return
						}
						g := granted.Add(1)
						if v.abandon > 0 && g%int64(v.abandon) == 0 {
							continue // the lease runs out; the next Begin takes over
						}
						to := time.Now()
						err = s.Fail(f.ctx, k, fp, rec.Attempt, true)
						mu.Lock()
						switch {
						case err == nil:
							seen = append(seen, tenure{attempt: rec.Attempt, from: from, to: to, store: w % 2})
						case v.abandon == 0 || !errors.Is(err, idempotency.ErrLeaseExpired) && !errors.Is(err, idempotency.ErrStaleAttempt):
							// With a long lease nobody can take the key from
							// its owner, so its release must succeed.
							errs = append(errs, fmt.Errorf("owner %d: Fail: %v", rec.Attempt, err))
						}
						mu.Unlock()
					}
				})
			}
			claimers.Wait()
			close(done)
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("%d errors, first: %v", len(errs), errs[0])
			}
			if n := granted.Load(); n < v.grants/4 {
				t.Fatalf("only %d owners in 15 s, want at least %d", n, v.grants/4)
			}
			checkTenures(t, seen)
		})
	}
}

// checkTenures fails unless the tenures do not overlap and their attempts
// rise in the order of the tenures. Tenures cannot overlap for a correct
// store, so sorting them by start puts them in the order owners were
// granted the key.
func checkTenures(t *testing.T, seen []tenure) {
	t.Helper()
	slices.SortFunc(seen, func(a, b tenure) int { return a.from.Compare(b.from) })
	inversions := 0
	for i := 1; i < len(seen); i++ {
		a, b := seen[i-1], seen[i]
		if b.from.Before(a.to) {
			t.Fatalf("owners %d and %d held the key at the same time: %v..%v and %v..%v",
				a.attempt, b.attempt, a.from, a.to, b.from, b.to)
		}
		if b.attempt <= a.attempt {
			if inversions == 0 {
				t.Errorf("owner granted after attempt %d (store %d) got attempt %d (store %d)", a.attempt, a.store, b.attempt, b.store)
			}
			inversions++
		}
	}
	if inversions > 0 {
		t.Fatalf("%d of %d owners got an attempt no higher than the owner before them", inversions, len(seen))
	}
	t.Logf("%d owners, attempts strictly rising", len(seen))
}
