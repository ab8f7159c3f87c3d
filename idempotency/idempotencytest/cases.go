package idempotencytest

import (
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
)

const fp, otherFP = "fp-request-a", "fp-request-b"

// testLeaseTakeover: when the owner's lease ends, the next Begin takes the
// key over with a higher attempt, and the old owner can then neither
// complete, fail nor renew it.
func testLeaseTakeover(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, shortPeriod, longPeriod)
	k := f.key("takeover")
	old := f.begin(k, fp)
	time.Sleep(settle)
	if _, found := f.get(k); found {
		t.Fatal("Get still finds the record after its lease ended")
	}
	cur := f.begin(k, fp)
	if cur.Attempt <= old.Attempt {
		t.Fatalf("takeover attempt %d is not higher than the old attempt %d", cur.Attempt, old.Attempt)
	}
	wantErr(t, "Complete by the old attempt", f.s.Complete(f.ctx, k, fp, old.Attempt, []byte("late")), idempotency.ErrStaleAttempt)
	wantErr(t, "Fail by the old attempt", f.s.Fail(f.ctx, k, fp, old.Attempt, true), idempotency.ErrStaleAttempt)
	_, err := f.s.Renew(f.ctx, k, fp, old.Attempt)
	wantErr(t, "Renew by the old attempt", err, idempotency.ErrStaleAttempt)

	f.complete(k, fp, cur.Attempt, []byte("fresh"))
	rec := f.replay(k, fp, idempotency.StateDone)
	if string(rec.Response) != "fresh" || rec.Attempt != cur.Attempt {
		t.Fatalf("replay = %q by attempt %d, want %q by attempt %d", rec.Response, rec.Attempt, "fresh", cur.Attempt)
	}
}

// testRetentionExpiry: when retention ends the key is forgotten, whatever
// fingerprint comes next, and the next owner still gets a higher attempt.
func testRetentionExpiry(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, longPeriod, shortPeriod)
	k := f.key("retention")
	first := f.begin(k, fp)
	f.complete(k, fp, first.Attempt, []byte("first"))
	f.replay(k, fp, idempotency.StateDone)
	time.Sleep(settle)
	if rec, found := f.get(k); found {
		t.Fatalf("Get finds %+v after retention ended", rec)
	}
	next := f.begin(k, otherFP)
	if next.Attempt <= first.Attempt {
		t.Fatalf("attempt after retention %d is not higher than %d", next.Attempt, first.Attempt)
	}
	wantErr(t, "Complete by the forgotten attempt", f.s.Complete(f.ctx, k, otherFP, first.Attempt, nil), idempotency.ErrStaleAttempt)
}

// testConflict: a key bound to one fingerprint refuses every other one, in
// every state, and never hands out the stored record.
func testConflict(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, longPeriod, longPeriod)
	setups := []struct {
		state  idempotency.State
		finish func(k idempotency.Key, attempt uint64) error
	}{
		{idempotency.StateInProgress, func(idempotency.Key, uint64) error { return nil }},
		{idempotency.StateDone, func(k idempotency.Key, a uint64) error {
			return f.s.Complete(f.ctx, k, fp, a, []byte("secret response"))
		}},
		{idempotency.StateFailed, func(k idempotency.Key, a uint64) error { return f.s.Fail(f.ctx, k, fp, a, false) }},
		{idempotency.StateRetryable, func(k idempotency.Key, a uint64) error { return f.s.Fail(f.ctx, k, fp, a, true) }},
	}
	for _, s := range setups {
		t.Run(string(s.state), func(t *testing.T) {
			f := f.sub(t)
			k := f.key("conflict-" + string(s.state))
			own := f.begin(k, fp)
			if err := s.finish(k, own.Attempt); err != nil {
				t.Fatal(err)
			}
			before, _ := f.get(k)
			for range 2 {
				rec, created, err := f.s.Begin(f.ctx, k, otherFP)
				wantErr(t, "Begin with another fingerprint", err, idempotency.ErrConflict)
				if created || rec.State != "" || rec.Response != nil || rec.Fingerprint != "" || rec.Attempt != 0 {
					t.Fatalf("conflicting Begin returned created=%v %+v; want nothing", created, rec)
				}
			}
			wantErr(t, "Complete with another fingerprint", f.s.Complete(f.ctx, k, otherFP, own.Attempt, nil), idempotency.ErrConflict)
			wantErr(t, "Fail with another fingerprint", f.s.Fail(f.ctx, k, otherFP, own.Attempt, false), idempotency.ErrConflict)
			_, err := f.s.Renew(f.ctx, k, otherFP, own.Attempt)
			wantErr(t, "Renew with another fingerprint", err, idempotency.ErrConflict)
			after, found := f.get(k)
			if !found || after.State != s.state || after.Fingerprint != fp || after.Attempt != own.Attempt ||
				!sameBytes(after.Response, before.Response) || !after.ExpiresAt.Equal(before.ExpiresAt) {
				t.Fatalf("record changed by conflicting calls: before %+v, after %+v", before, after)
			}
		})
	}
}

// testDoneReplays: a done key answers every Begin with the stored
// response, byte for byte, until retention ends.
func testDoneReplays(t *testing.T, newStore NewStore) {
	const lease, retention = 10 * time.Minute, time.Hour
	f := newFixture(t, newStore, lease, retention)
	responses := map[string][]byte{
		"binary": {0, 1, 2, 0xff, 0xfe, 0, '\n', '"', '\\'},
		"text":   []byte(`{"order":"o-1","status":"created","note":"héllo"}`),
		"large":  []byte(strings.Repeat("0123456789abcdef", 64<<10/16)),
		"empty":  {},
	}
	for name, resp := range responses {
		t.Run(name, func(t *testing.T) {
			f := f.sub(t)
			k := f.key("done-" + name)
			before := time.Now()
			own := f.begin(k, fp)
			within(t, "in-progress ExpiresAt", own.ExpiresAt, before, time.Now(), lease)
			if g, found := f.get(k); !found || g.State != idempotency.StateInProgress || g.Attempt != own.Attempt || !g.ExpiresAt.Equal(own.ExpiresAt) {
				t.Fatalf("Get of an in-progress key = %+v, %v; want %+v", g, found, own)
			}
			before = time.Now()
			f.complete(k, fp, own.Attempt, resp)
			after := time.Now()
			for range 3 {
				rec := f.replay(k, fp, idempotency.StateDone)
				if !sameBytes(rec.Response, resp) || rec.Attempt != own.Attempt {
					t.Fatalf("replay = %q by attempt %d, want %q by attempt %d", rec.Response, rec.Attempt, resp, own.Attempt)
				}
				within(t, "done ExpiresAt", rec.ExpiresAt, before, after, retention)
				if len(rec.Response) > 0 {
					rec.Response[0] ^= 0xff // a caller scribbling on its copy
				}
			}
			g, found := f.get(k)
			if !found || g.State != idempotency.StateDone || !sameBytes(g.Response, resp) {
				t.Fatalf("Get = %+v, %v; want done with the response", g, found)
			}
		})
	}
}

// testFailedFinal: a final failure is answered, not re-run, within
// retention.
func testFailedFinal(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, longPeriod, longPeriod)
	k := f.key("failed")
	own := f.begin(k, fp)
	if err := f.s.Fail(f.ctx, k, fp, own.Attempt, false); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		rec := f.replay(k, fp, idempotency.StateFailed)
		if rec.Attempt != own.Attempt || len(rec.Response) != 0 {
			t.Fatalf("failed replay = %+v", rec)
		}
	}
	if g, found := f.get(k); !found || g.State != idempotency.StateFailed {
		t.Fatalf("Get = %+v, %v; want failed", g, found)
	}
}

// testRetryable: a retryable failure releases the key to the next Begin
// with the same fingerprint, which gets a higher attempt.
func testRetryable(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore, longPeriod, longPeriod)
	k := f.key("retryable")
	first := f.begin(k, fp)
	if err := f.s.Fail(f.ctx, k, fp, first.Attempt, true); err != nil {
		t.Fatal(err)
	}
	if g, found := f.get(k); !found || g.State != idempotency.StateRetryable || g.Attempt != first.Attempt {
		t.Fatalf("Get after a retryable failure = %+v, %v", g, found)
	}
	second := f.begin(k, fp)
	if second.Attempt <= first.Attempt {
		t.Fatalf("attempt after release %d is not higher than %d", second.Attempt, first.Attempt)
	}
	wantErr(t, "Complete by the released attempt", f.s.Complete(f.ctx, k, fp, first.Attempt, nil), idempotency.ErrStaleAttempt)
	_, _, err := f.s.Begin(f.ctx, k, fp)
	wantErr(t, "Begin while the new attempt runs", err, idempotency.ErrInProgress)
	f.complete(k, fp, second.Attempt, []byte("second"))
	if rec := f.replay(k, fp, idempotency.StateDone); string(rec.Response) != "second" {
		t.Fatalf("replay = %q", rec.Response)
	}
}
