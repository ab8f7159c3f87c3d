package idempotencytest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
)

// beginResults counts the outcomes of concurrent Begins.
type beginResults struct {
	owners     []idempotency.Record
	inProgress []idempotency.Record
	other      []error
}

// beginAll calls Begin from n goroutines released together.
func (f *fixture) beginAll(k idempotency.Key, n int) beginResults {
	var (
		mu    sync.Mutex
		res   beginResults
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for range n {
		wg.Go(func() {
			<-start
			rec, created, err := f.s.Begin(f.ctx, k, fp)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && created:
				res.owners = append(res.owners, rec)
			case errors.Is(err, idempotency.ErrInProgress) && !created:
				res.inProgress = append(res.inProgress, rec)
			default:
				res.other = append(res.other, fmt.Errorf("created=%v rec=%+v err=%v", created, rec, err))
			}
		})
	}
	close(start)
	wg.Wait()
	return res
}

// check fails unless one caller became the owner and every other one was
// told the key is in progress, with the record of an owner, and returns
// the first owner. Under a lease that can end while the n calls are still
// being served (a loaded machine, a backend serving them one by one), a
// later caller may take the key over from an owner whose lease has ended:
// each further owner must have been granted the key no earlier than the
// end of the lease before it, by the store's own clock, or two owners held
// it at once.
func (r beginResults) check(t *testing.T, n int, lease time.Duration) idempotency.Record {
	t.Helper()
	t.Logf("workers=%d created=%d in_progress=%d other=%d", n, len(r.owners), len(r.inProgress), len(r.other))
	if len(r.owners) < 1 || len(r.owners)+len(r.inProgress) != n || len(r.other) != 0 {
		t.Fatalf("%d owners, %d in progress, other outcomes %v; want 1 owner and %d in progress",
			len(r.owners), len(r.inProgress), r.other, n-1)
	}
	owners := slices.Clone(r.owners)
	slices.SortFunc(owners, func(a, b idempotency.Record) int { return cmp.Compare(a.Attempt, b.Attempt) })
	for i := 1; i < len(owners); i++ {
		prev, next := owners[i-1], owners[i]
		if next.ExpiresAt.Add(-lease).Before(prev.ExpiresAt) {
			t.Fatalf("owner %d was granted the key at %v, before the lease of owner %d ended at %v",
				next.Attempt, next.ExpiresAt.Add(-lease), prev.Attempt, prev.ExpiresAt)
		}
	}
	if len(owners) > 1 {
		t.Logf("%d owners in turn: each lease ended before the next caller was served", len(owners))
	}
	for _, rec := range r.inProgress {
		if rec.State != idempotency.StateInProgress || !slices.ContainsFunc(owners, func(o idempotency.Record) bool {
			return o.Attempt == rec.Attempt && o.ExpiresAt.Equal(rec.ExpiresAt)
		}) {
			t.Fatalf("in-progress answer %+v does not describe an owner's lease %+v", rec, owners)
		}
	}
	return owners[0]
}

// testConcurrentBegin: of 64 simultaneous Begins on a fresh key exactly one
// becomes the owner; the other 63 are told the key is in progress.
func testConcurrentBegin(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, longPeriod, longPeriod)
	k := f.key("concurrent")
	const n = 64
	f.beginAll(k, n).check(t, n, longPeriod)
}

// testConcurrentTakeover: when a lease ends or a key is released, the
// simultaneous Begins that race to take it over again yield one owner at a
// time: one, unless its short lease ends before every racer was served.
func testConcurrentTakeover(t *testing.T, newStore NewStore) {
	const n = 32
	t.Run("after lease", func(t *testing.T) {
		f := newFixture(t, newStore, shortPeriod, longPeriod)
		k := f.key("takeover-race")
		old := f.begin(k, fp)
		time.Sleep(settle)
		if own := f.beginAll(k, n).check(t, n, shortPeriod); own.Attempt <= old.Attempt {
			t.Fatalf("takeover attempt %d not above %d", own.Attempt, old.Attempt)
		}
	})
	t.Run("after release", func(t *testing.T) {
		f := newFixture(t, newStore, longPeriod, longPeriod)
		k := f.key("release-race")
		old := f.begin(k, fp)
		if err := f.s.Fail(f.ctx, k, fp, old.Attempt, true); err != nil {
			t.Fatal(err)
		}
		if own := f.beginAll(k, n).check(t, n, longPeriod); own.Attempt <= old.Attempt {
			t.Fatalf("takeover attempt %d not above %d", own.Attempt, old.Attempt)
		}
	})
}

// testConcurrentFinish: when the owner's Complete and Fail calls race
// (a retried request, a confused worker), exactly one transition applies
// and the rest are stale.
func testConcurrentFinish(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, longPeriod, longPeriod)
	k := f.key("finish-race")
	own := f.begin(k, fp)
	const n = 16
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		wins  []int
		stale int
		other []error
		start = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			var err error
			if i%4 == 3 {
				err = f.s.Fail(f.ctx, k, fp, own.Attempt, false)
			} else {
				err = f.s.Complete(f.ctx, k, fp, own.Attempt, fmt.Appendf(nil, "response-%d", i))
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins = append(wins, i)
			case errors.Is(err, idempotency.ErrStaleAttempt):
				stale++
			default:
				other = append(other, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(wins) != 1 || stale != n-1 || len(other) != 0 {
		t.Fatalf("%d transitions applied (%v), %d stale, other %v; want 1 and %d stale", len(wins), wins, stale, other, n-1)
	}
	rec, found := f.get(k)
	switch w := wins[0]; {
	case !found:
		t.Fatal("record vanished")
	case w%4 == 3 && rec.State != idempotency.StateFailed:
		t.Fatalf("Fail by worker %d won but the record is %+v", w, rec)
	case w%4 != 3 && (rec.State != idempotency.StateDone || string(rec.Response) != fmt.Sprintf("response-%d", w)):
		t.Fatalf("Complete by worker %d won but the record is %+v", w, rec)
	}
}
