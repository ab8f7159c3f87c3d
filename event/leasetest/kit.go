// Package leasetest is the contract kit of event.LeaseStore: Run checks
// that a store grants a consumer group's lease to one holder at a time,
// with fencing tokens that rise with every holder, and saves checkpoints
// only under the lease in force.
package leasetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// Store is what the kit tests: the leases and the checkpoints they fence.
type Store interface {
	event.LeaseStore
	event.CheckpointStore
}

// Run runs every case against stores from open (a new, empty one per
// call, for bounded context "shop"). Its cases run in parallel
// (t.Parallel), and open is called from several goroutines.
func Run(t *testing.T, open func(t *testing.T) Store) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(*testing.T, Store)
	}{
		{"AcquireRenewRelease", acquireRenewRelease},
		{"AnExpiredLeaseIsTakenOver", anExpiredLeaseIsTakenOver},
		{"FencedSavesOnlyUnderTheLeaseInForce", fencedSaves},
		{"OneHolderAtATimeUnderContention", oneHolderAtATime},
		{"BadRequestsAreRefused", badRequests},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, open(t))
		})
	}
}

var group = factum.Function{Context: "shop", Processor: "snapshotter"}

func acquireRenewRelease(t *testing.T, st Store) {
	ctx := context.Background()
	a, err := st.Acquire(ctx, group, "a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if a.Token == 0 || a.Holder != "a" || a.Group != group {
		t.Fatalf("lease %+v", a)
	}
	for _, holder := range []string{"b", "a"} {
		if _, err := st.Acquire(ctx, group, holder, time.Minute); !errors.Is(err, event.ErrLeaseHeld) {
			t.Errorf("Acquire by %s while a holds it: %v, want ErrLeaseHeld", holder, err)
		}
	}
	renewed, err := st.Renew(ctx, a, time.Minute)
	if err != nil || renewed.Token != a.Token {
		t.Fatalf("Renew: %+v, %v; want the same token %d", renewed, err, a.Token)
	}
	other := factum.Function{Context: "shop", Processor: "saga"}
	if _, err := st.Acquire(ctx, other, "b", time.Minute); err != nil {
		t.Errorf("another group's lease: %v", err)
	}
	if err := st.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	b, err := st.Acquire(ctx, group, "b", time.Minute)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	if b.Token <= a.Token {
		t.Errorf("token %d after %d: it must rise with every holder", b.Token, a.Token)
	}
	if _, err := st.Renew(ctx, a, time.Minute); !errors.Is(err, event.ErrLeaseLost) {
		t.Errorf("Renew of a released lease: %v, want ErrLeaseLost", err)
	}
	// A stale holder's release leaves the new lease alone.
	if err := st.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Renew(ctx, b, time.Minute); err != nil {
		t.Errorf("the new holder's lease after a stale release: %v", err)
	}
	if _, err := st.Acquire(ctx, group, "c", time.Minute); !errors.Is(err, event.ErrLeaseHeld) {
		t.Errorf("Acquire while b holds it: %v, want ErrLeaseHeld", err)
	}
}

func anExpiredLeaseIsTakenOver(t *testing.T, st Store) {
	ctx := context.Background()
	a, err := st.Acquire(ctx, group, "a", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(250 * time.Millisecond)
	if _, err := st.Renew(ctx, a, time.Minute); !errors.Is(err, event.ErrLeaseLost) {
		t.Errorf("Renew after expiry: %v, want ErrLeaseLost", err)
	}
	b, err := st.Acquire(ctx, group, "b", time.Minute)
	if err != nil {
		t.Fatalf("Acquire after expiry: %v", err)
	}
	if b.Token <= a.Token {
		t.Errorf("token %d after %d", b.Token, a.Token)
	}
	if err := st.SaveFencedCheckpoint(ctx, a, factum.Position{Seq: 5}); !errors.Is(err, event.ErrLeaseLost) {
		t.Errorf("a save under the expired lease: %v, want ErrLeaseLost", err)
	}
	if pos, _ := st.Checkpoint(ctx, group); pos != (factum.Position{}) {
		t.Errorf("checkpoint %v after a refused save", pos)
	}
}

func fencedSaves(t *testing.T, st Store) {
	ctx := context.Background()
	a, err := st.Acquire(ctx, group, "a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{3, 7, 5} {
		if err := st.SaveFencedCheckpoint(ctx, a, factum.Position{Tx: 1, Seq: seq}); err != nil {
			t.Fatalf("save %d: %v", seq, err)
		}
	}
	if pos, err := st.Checkpoint(ctx, group); err != nil || pos != (factum.Position{Tx: 1, Seq: 7}) {
		t.Errorf("checkpoint %v, %v; want 1/7 (never backwards)", pos, err)
	}
	forged := a
	forged.Token++
	if err := st.SaveFencedCheckpoint(ctx, forged, factum.Position{Tx: 1, Seq: 9}); !errors.Is(err, event.ErrLeaseLost) {
		t.Errorf("a save under a token not granted: %v, want ErrLeaseLost", err)
	}
	if err := st.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveFencedCheckpoint(ctx, a, factum.Position{Tx: 1, Seq: 9}); !errors.Is(err, event.ErrLeaseLost) {
		t.Errorf("a save after release: %v, want ErrLeaseLost", err)
	}
	if pos, _ := st.Checkpoint(ctx, group); pos != (factum.Position{Tx: 1, Seq: 7}) {
		t.Errorf("checkpoint %v after refused saves, want 1/7", pos)
	}
}

// tenure is the time one holder believed it held the lease: from the
// grant's answer to the TTL less a margin after it asked.
type tenure struct {
	holder     string
	token      uint64
	start, end time.Time
}

// Holders that acquire, renew and release in a loop, with a short TTL, each
// acting only until the TTL less a margin after it asked: no two tenures
// overlap, and tokens rise in the order the leases were granted.
func oneHolderAtATime(t *testing.T, st Store) {
	const ttl = 60 * time.Millisecond
	const margin = ttl / 4
	ctx := context.Background()
	var mu sync.Mutex
	var tenures []tenure
	deadline := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range 8 {
		holder := fmt.Sprintf("holder-%d", i)
		wg.Go(func() {
			for time.Now().Before(deadline) {
				asked := time.Now()
				l, err := st.Acquire(ctx, group, holder, ttl)
				if errors.Is(err, event.ErrLeaseHeld) {
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				tn := tenure{holder: holder, token: l.Token, start: time.Now(), end: asked.Add(ttl - margin)}
				// Renew once, sometimes; then let it lapse or release it.
				if i%2 == 0 {
					asked = time.Now()
					if _, err := st.Renew(ctx, l, ttl); err == nil {
						tn.end = asked.Add(ttl - margin)
					}
				}
				mu.Lock()
				tenures = append(tenures, tn)
				mu.Unlock()
				if i%3 == 0 {
					time.Sleep(time.Until(tn.end))
					_ = st.Release(ctx, l)
				} else {
					time.Sleep(ttl)
				}
			}
		})
	}
	wg.Wait()
	if len(tenures) < 5 {
		t.Fatalf("only %d leases granted in 1.5 s", len(tenures))
	}
	// A holder descheduled past its TTL records a tenure that ended before
	// it began: it never acted, and overlaps nothing.
	slices.SortFunc(tenures, func(a, b tenure) int { return cmp.Compare(a.token, b.token) })
	for i, a := range tenures {
		if i > 0 && a.token == tenures[i-1].token {
			t.Errorf("token %d granted to %s and %s", a.token, tenures[i-1].holder, a.holder)
		}
		for _, b := range tenures[i+1:] {
			if a.start.Before(a.end) && b.start.Before(b.end) && a.start.Before(b.end) && b.start.Before(a.end) {
				t.Errorf("%s (token %d) and %s (token %d) held the lease at once", a.holder, a.token, b.holder, b.token)
			}
			// A lease granted later has the higher token: b's tenure cannot
			// have ended before a's began.
			if b.start.Before(b.end) && a.start.Before(a.end) && b.end.Before(a.start) {
				t.Errorf("token %d (%s) was held before token %d (%s)", b.token, b.holder, a.token, a.holder)
			}
		}
	}
}

func badRequests(t *testing.T, st Store) {
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"bad group": func() error {
			_, err := st.Acquire(ctx, factum.Function{Context: "Shop!", Processor: "p"}, "a", time.Second)
			return err
		},
		"no holder": func() error { _, err := st.Acquire(ctx, group, "", time.Second); return err },
		"no TTL":    func() error { _, err := st.Acquire(ctx, group, "a", 0); return err },
	} {
		if err := call(); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: %v, want IllegalArgument", name, err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := st.Acquire(cancelled, group, "a", time.Second); err == nil {
		t.Error("Acquire with a cancelled context succeeded")
	}
}
