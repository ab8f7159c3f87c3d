package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencytest"
)

// newFakeClock returns a clock the test moves by hand.
func newFakeClock() *idempotencytest.Clock {
	return idempotencytest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

func newMemory(t *testing.T, lease, retention time.Duration, clock *idempotencytest.Clock) *idempotency.Memory {
	t.Helper()
	m, err := idempotency.NewMemory(idempotency.MemoryConfig{
		Policy: idempotency.Policy{Lease: lease, Retention: retention},
		Clock:  clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMemoryContract(t *testing.T) {
	idempotencytest.RunHarness(t, memoryHarness())
}

// memoryHarness builds memory stores for the kit. A memory store is one
// process's memory, so the "second instance" a case asks for within one
// test is the same store. Its clock passes through a gate, which is how
// the kit's Hold holds the store's lock: the store reads its clock under
// its shard lock, and a read that waits at the closed gate keeps the lock.
func memoryHarness() idempotencytest.Harness {
	var (
		mu     sync.Mutex
		stores = map[*testing.T]*idempotency.Memory{}
		gate   sync.RWMutex
	)
	gated := func(clock func() time.Time) func() time.Time {
		return func() time.Time {
			gate.RLock()
			defer gate.RUnlock()
			return clock()
		}
	}
	build := func(t *testing.T, p idempotency.Policy, clock func() time.Time) idempotency.Store {
		mu.Lock()
		defer mu.Unlock()
		if m, ok := stores[t]; ok && m.Policy() == p {
			return m
		}
		m, err := idempotency.NewMemory(idempotency.MemoryConfig{Policy: p, Clock: gated(clock)})
		if err != nil {
			t.Fatal(err)
		}
		stores[t] = m
		t.Cleanup(func() {
			mu.Lock()
			defer mu.Unlock()
			delete(stores, t)
		})
		return m
	}
	return idempotencytest.Harness{
		New: func(t *testing.T, p idempotency.Policy) idempotency.Store { return build(t, p, time.Now) },
		NewClocked: func(t *testing.T, p idempotency.Policy, clock func() time.Time) idempotency.Store {
			return build(t, p, clock)
		},
		Hold: func(t *testing.T, k idempotency.Key) func() {
			gate.Lock()
			return gate.Unlock
		},
	}
}

var seedKey = idempotency.Key{Tenant: "tenant-a", Operation: "order.create", Value: "req-1001"}

// The seed's three tests, on a fake clock: exact instants instead of
// sleeps.

func TestConcurrentSameKeyOnlyOneOwner(t *testing.T) {
	s := newMemory(t, 30*time.Second, 24*time.Hour, newFakeClock())
	const workers = 64
	var (
		wg                  sync.WaitGroup
		mu                  sync.Mutex
		created, inProgress int
		other               []error
		start               = make(chan struct{})
	)
	for range workers {
		wg.Go(func() {
			<-start
			_, ok, err := s.Begin(context.Background(), seedKey, "sha256:body-a")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && ok:
				created++
			case errors.Is(err, idempotency.ErrInProgress):
				inProgress++
			default:
				other = append(other, err)
			}
		})
	}
	close(start)
	wg.Wait()
	t.Logf("workers=%d created=%d in_progress=%d other=%d", workers, created, inProgress, len(other))
	if created != 1 || inProgress != workers-1 || len(other) != 0 {
		t.Fatalf("created=%d in_progress=%d other=%v", created, inProgress, other)
	}
}

func TestLeaseExpiryAllowsTakeover(t *testing.T) {
	clock := newFakeClock()
	s := newMemory(t, 30*time.Second, 24*time.Hour, clock)
	ctx := context.Background()
	old, created, err := s.Begin(ctx, seedKey, "sha256:body-a")
	if err != nil || !created {
		t.Fatal(created, err)
	}
	clock.Advance(30*time.Second - time.Nanosecond)
	if _, _, err := s.Begin(ctx, seedKey, "sha256:body-a"); !errors.Is(err, idempotency.ErrInProgress) {
		t.Fatalf("Begin one nanosecond before the lease ends: %v, want ErrInProgress", err)
	}
	clock.Advance(time.Nanosecond)
	cur, created, err := s.Begin(ctx, seedKey, "sha256:body-a")
	if err != nil || !created || cur.Attempt <= old.Attempt {
		t.Fatalf("takeover = %+v, %v, %v; want a new owner with an attempt above %d", cur, created, err, old.Attempt)
	}
	err = s.Complete(ctx, seedKey, "sha256:body-a", old.Attempt, []byte("late"))
	t.Logf("after_lease_expiry attempt_old=%d attempt_new=%d created=%v late_complete=%v", old.Attempt, cur.Attempt, created, err)
	if !errors.Is(err, idempotency.ErrStaleAttempt) {
		t.Fatalf("late Complete: %v, want ErrStaleAttempt", err)
	}
	if !cur.ExpiresAt.Equal(clock.Now().Add(30 * time.Second)) {
		t.Fatalf("new lease ends %v, want %v", cur.ExpiresAt, clock.Now().Add(30*time.Second))
	}
}

func TestRetentionExpiryForgetsKey(t *testing.T) {
	clock := newFakeClock()
	s := newMemory(t, 30*time.Second, time.Hour, clock)
	ctx := context.Background()
	rec, _, err := s.Begin(ctx, seedKey, "sha256:body-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, seedKey, "sha256:body-a", rec.Attempt, []byte(`{"order":"o-1"}`)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour - time.Nanosecond)
	if got, created, err := s.Begin(ctx, seedKey, "sha256:body-a"); err != nil || created || got.State != idempotency.StateDone {
		t.Fatalf("Begin just before retention ends = %+v, %v, %v; want the replay", got, created, err)
	}
	clock.Advance(time.Nanosecond)
	_, created, err := s.Begin(ctx, seedKey, "sha256:body-b")
	t.Logf("after_retention created=%v", created)
	if err != nil || !created {
		t.Fatalf("Begin after retention = %v, %v; want a new owner", created, err)
	}
}

func TestMemorySweepsAndPurges(t *testing.T) {
	clock := newFakeClock()
	s := newMemory(t, time.Minute, time.Minute, clock)
	ctx := context.Background()
	const n = 20000
	begin := func(prefix string) {
		t.Helper()
		for i := range n {
			k := idempotency.Key{Tenant: "t", Operation: "op", Value: prefix + string(rune('a'+i%26)) + time.Duration(i).String()}
			if _, _, err := s.Begin(ctx, k, "fp"); err != nil {
				t.Fatal(err)
			}
		}
	}
	begin("old-")
	if s.Len() != n {
		t.Fatalf("Len = %d, want %d", s.Len(), n)
	}
	clock.Advance(time.Minute)
	// Inserting as many new keys again sweeps the expired ones on the way:
	// the store never holds much more than twice its live records.
	begin("new-")
	if l := s.Len(); l >= 2*n {
		t.Fatalf("Len = %d after %d expired and %d live keys: expired records were not swept", l, n, n)
	}
	clock.Advance(time.Minute)
	purged, err := s.Purge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if purged == 0 || s.Len() != 0 {
		t.Fatalf("Purge removed %d, %d left; want every record gone", purged, s.Len())
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Purge(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Purge with a cancelled context: %v", err)
	}
}

func TestMemoryPolicy(t *testing.T) {
	cases := []struct {
		name    string
		p       idempotency.Policy
		want    idempotency.Policy
		invalid bool
	}{
		{"zero is the default", idempotency.Policy{}, idempotency.Policy{Lease: idempotency.DefaultLease, Retention: idempotency.DefaultRetention}, false},
		{"explicit", idempotency.Policy{Lease: time.Second, Retention: time.Minute}, idempotency.Policy{Lease: time.Second, Retention: time.Minute}, false},
		{"negative lease", idempotency.Policy{Lease: -time.Second}, idempotency.Policy{}, true},
		{"negative retention", idempotency.Policy{Retention: -time.Second}, idempotency.Policy{}, true},
		{"sub-millisecond lease", idempotency.Policy{Lease: time.Microsecond}, idempotency.Policy{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := idempotency.NewMemory(idempotency.MemoryConfig{Policy: c.p})
			if c.invalid {
				if !errors.Is(err, factum.ErrIllegalArgument) {
					t.Fatalf("NewMemory(%+v) = %v, want IllegalArgument", c.p, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Policy() != c.want {
				t.Fatalf("policy = %+v, want %+v", m.Policy(), c.want)
			}
		})
	}
}

func TestRunPurger(t *testing.T) {
	clock := newFakeClock()
	s := newMemory(t, time.Millisecond, time.Millisecond, clock)
	if _, _, err := s.Begin(context.Background(), seedKey, "fp"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- idempotency.RunPurger(ctx, s, time.Millisecond, func(err error) { t.Error(err) }) }()
	for s.Len() != 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("RunPurger returned %v, want context.Canceled", err)
	}
	if err := idempotency.RunPurger(context.Background(), s, 0, nil); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Fatalf("RunPurger with interval 0: %v", err)
	}
}

// The memory store judges expiry on the wall-clock instant its records
// report, whatever clock it reads: a reading of time.Now carries a
// monotonic part read just after the wall part, and a thread paused
// between the two reads made a record live past the ExpiresAt it showed
// (TestMemoryContract/Linearizable failed on it under CI's load). The old
// code kept the monotonic part in ExpiresAt and compared by it.
func TestMemoryJudgesExpiryOnTheWallClock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clock func() time.Time
	}{
		{"default clock", nil},
		{"time.Now", time.Now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := idempotency.NewMemory(idempotency.MemoryConfig{Clock: tc.clock})
			if err != nil {
				t.Fatal(err)
			}
			k := idempotency.Key{Tenant: "t", Operation: "op", Value: "k"}
			rec, created, err := m.Begin(context.Background(), k, "fp")
			if err != nil || !created {
				t.Fatalf("Begin: created %v, %v", created, err)
			}
			if s := rec.ExpiresAt.String(); strings.Contains(s, " m=") {
				t.Fatalf("ExpiresAt %s carries a monotonic reading: expiry would be judged by it, not by the wall-clock instant it reports", s)
			}
		})
	}
}
