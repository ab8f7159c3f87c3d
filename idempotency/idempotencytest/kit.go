package idempotencytest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/internal/kit"
)

// NewStore returns a store applying policy p. It may be called several
// times per case. Register clean-up with t.Cleanup.
type NewStore func(t *testing.T, p idempotency.Policy) idempotency.Store

// The kit's timing. Short periods are long enough for a loaded two-core
// machine to make a few round trips inside them, and the kit waits
// settle longer than a period before it counts on it having ended.
const (
	shortPeriod = 500 * time.Millisecond
	settle      = shortPeriod + 250*time.Millisecond
	longPeriod  = time.Hour
)

// Run runs every case of the contract against stores from newStore. It
// is RunHarness with nothing but New, so newStore must follow
// Harness.New: stores it builds for one test share their records (an
// in-process store returns the same instance).
func Run(t *testing.T, newStore NewStore) {
	t.Helper()
	RunHarness(t, Harness{New: newStore})
}

// RunHarness runs every case of the contract against the stores h builds,
// using the extra powers h grants where the cases need them. Its cases run
// in parallel (t.Parallel), so they also race each other on one backend,
// and h's functions are called from several goroutines; the cases that
// wait for real expiries or hold the backend's lock run alone first.
func RunHarness(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("idempotencytest: Harness.New is nil")
	}
	newStore := h.New
	cases := []kit.Case[NewStore]{
		{Name: "ConcurrentBeginOneOwner", Run: testConcurrentBegin},
		{Name: "LeaseExpiryAllowsTakeover", Run: testLeaseTakeover, Serial: true},
		{Name: "RetentionExpiryForgetsKey", Run: testRetentionExpiry, Serial: true},
		{Name: "ConflictOnOtherFingerprint", Run: testConflict},
		{Name: "DoneReplaysResponse", Run: testDoneReplays},
		{Name: "FailedStaysFailed", Run: testFailedFinal},
		{Name: "RetryableReleasesKey", Run: testRetryable},
		{Name: "ConcurrentTakeoverOneOwner", Run: testConcurrentTakeover, Serial: true},
		{Name: "ConcurrentFinishOneWins", Run: testConcurrentFinish},
		{Name: "InvalidInputRefused", Run: testInvalidInput},
		{Name: "FinishAfterRecordVanished", Run: testVanished, Serial: true},
		{Name: "FinishedAttemptIsStale", Run: testFinishedStale},
		{Name: "RenewExtendsLease", Run: testRenew, Serial: true},
		{Name: "KeysAreScoped", Run: testScoped},
		{Name: "CancelledContext", Run: testCancelled},
		{Name: "FailedAndRetryableKeptForRetention", Run: testFailureRetention, Serial: true},
	}
	kit.RunParallel(t, func(*testing.T) NewStore { return newStore }, cases)
	harnessCases := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"TakeoversStrictlyIncreasing", testTakeoverOrder},
		{"LapseThenLateWriteRefused", testLapseThenLateWrite},
		{"Linearizable", testLinearizable},
	}
	for _, c := range harnessCases {
		// These hold the backend's lock (Harness.Hold) or wait for lapses,
		// so they run alone.
		t.Run(c.name, func(t *testing.T) { c.fn(t, h) })
	}
}

// fixture holds one case's store and key factory.
type fixture struct {
	t     *testing.T
	s     idempotency.Store
	ctx   context.Context
	scope string
}

func newFixture(t *testing.T, newStore NewStore, lease, retention time.Duration) *fixture {
	t.Helper()
	s := newStore(t, idempotency.Policy{Lease: lease, Retention: retention})
	if s == nil {
		t.Fatal("NewStore returned nil")
	}
	return &fixture{t: t, s: s, ctx: context.Background(), scope: factum.NewID()}
}

// sub returns a copy of f reporting to t, for a subtest.
func (f *fixture) sub(t *testing.T) *fixture {
	c := *f
	c.t = t
	return &c
}

// key returns a key unique to this run of the case.
func (f *fixture) key(name string) idempotency.Key {
	return idempotency.Key{Tenant: "kit", Operation: "POST /orders", Value: f.scope + "-" + name}
}

func (f *fixture) begin(k idempotency.Key, fp string) idempotency.Record {
	f.t.Helper()
	rec, created, err := f.s.Begin(f.ctx, k, fp)
	if err != nil || !created {
		f.t.Fatalf("Begin(%s, %s) = created %v, %v; want a new owner", k, fp, created, err)
	}
	if rec.State != idempotency.StateInProgress || rec.Fingerprint != fp || rec.Attempt == 0 || rec.Response != nil {
		f.t.Fatalf("Begin(%s) returned %+v; want in progress, fingerprint %s, attempt > 0, no response", k, rec, fp)
	}
	return rec
}

// replay asserts that Begin answers with a finished record.
func (f *fixture) replay(k idempotency.Key, fp string, state idempotency.State) idempotency.Record {
	f.t.Helper()
	rec, created, err := f.s.Begin(f.ctx, k, fp)
	if err != nil || created {
		f.t.Fatalf("Begin(%s) on a %s key = created %v, %v; want the stored record", k, state, created, err)
	}
	if rec.State != state || rec.Fingerprint != fp {
		f.t.Fatalf("Begin(%s) replayed %+v; want state %s, fingerprint %s", k, rec, state, fp)
	}
	return rec
}

func (f *fixture) complete(k idempotency.Key, fp string, attempt uint64, resp []byte) {
	f.t.Helper()
	if err := f.s.Complete(f.ctx, k, fp, attempt, resp); err != nil {
		f.t.Fatalf("Complete(%s, attempt %d): %v", k, attempt, err)
	}
}

func (f *fixture) get(k idempotency.Key) (idempotency.Record, bool) {
	f.t.Helper()
	rec, found, err := f.s.Get(f.ctx, k)
	if err != nil {
		f.t.Fatalf("Get(%s): %v", k, err)
	}
	if !found && (rec.State != "" || rec.Attempt != 0) {
		f.t.Fatalf("Get(%s) found nothing but returned %+v", k, rec)
	}
	return rec, found
}

// wantErr fails unless err wraps target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// within fails unless got lies in [from+d-slack, to+d+slack]: the store's
// clock (a database's, Redis's) may differ slightly from the test's, and
// Redis keeps milliseconds.
func within(t *testing.T, what string, got, from, to time.Time, d time.Duration) {
	t.Helper()
	const slack = 2 * time.Second
	lo, hi := from.Add(d-slack), to.Add(d+slack)
	if got.Before(lo) || got.After(hi) {
		t.Fatalf("%s = %v, want between %v and %v", what, got, lo, hi)
	}
}

func sameBytes(a, b []byte) bool { return bytes.Equal(a, b) }
