package idempotencytest

import (
	"testing"
	"time"

	"github.com/factum-go/factum/idempotency"
)

// testFailureRetention: a final failure and a retryable one are both kept
// for the retention window (the first answered to every duplicate, the
// second keeping the key bound to its fingerprint) and forgotten once it
// ends, so that any request may then use the key.
func testFailureRetention(t *testing.T, newStore NewStore) {
	for _, retryable := range []bool{false, true} {
		state := idempotency.StateFailed
		if retryable {
			state = idempotency.StateRetryable
		}
		t.Run(string(state), func(t *testing.T) {
			f := newFixture(t, newStore, longPeriod, shortPeriod)
			k := f.key("retention-" + string(state))
			own := f.begin(k, fp)
			before := time.Now()
			if err := f.s.Fail(f.ctx, k, fp, own.Attempt, retryable); err != nil {
				t.Fatalf("Fail: %v", err)
			}
			after := time.Now()
			g, found := f.get(k)
			if !found || g.State != state || g.Attempt != own.Attempt || g.Fingerprint != fp {
				t.Fatalf("Get after Fail(retryable=%v) = %+v, %v; want %s by attempt %d", retryable, g, found, state, own.Attempt)
			}
			// The record is kept for the retention period, not the lease.
			within(t, "ExpiresAt after Fail", g.ExpiresAt, before, after, shortPeriod)
			// Inside the window another request may not use the key.
			_, _, err := f.s.Begin(f.ctx, k, otherFP)
			wantErr(t, "Begin with another fingerprint inside retention", err, idempotency.ErrConflict)
			if !retryable {
				if rec := f.replay(k, fp, idempotency.StateFailed); rec.Attempt != own.Attempt {
					t.Fatalf("failed replay by attempt %d, want %d", rec.Attempt, own.Attempt)
				}
			}
			time.Sleep(time.Until(g.ExpiresAt.Add(settle - shortPeriod)))
			if rec, found := f.get(k); found {
				t.Fatalf("Get finds %+v after retention ended", rec)
			}
			next := f.begin(k, otherFP)
			if next.Attempt <= own.Attempt {
				t.Fatalf("attempt after retention %d is not higher than %d", next.Attempt, own.Attempt)
			}
		})
	}
}
