package idempotency

import (
	"context"
	"time"

	"github.com/factum-go/factum"
)

// Store keeps idempotency records. Every method is atomic inside the
// backend: whatever the number of concurrent callers and processes, each
// key has at most one owner at a time. Implementations must pass
// idempotencytest.Run.
type Store interface {
	// Begin claims k for the request identified by fingerprint.
	//
	// created is true only for the caller that must now do the work; it
	// owns the key with rec.Attempt until rec.ExpiresAt and must finish
	// with Complete or Fail. Otherwise, if the key is bound to another
	// fingerprint, Begin returns ErrConflict (and no record); if another
	// attempt holds a live lease, it returns ErrInProgress with that
	// record, so the caller can tell when the lease ends; if the key is
	// done or failed, it returns that record and a nil error. A retryable
	// record, or one whose lease or retention ended, is taken over with a
	// higher attempt.
	Begin(ctx context.Context, k Key, fingerprint string) (rec Record, created bool, err error)

	// Complete stores response as the outcome of attempt and keeps it for
	// the retention period. It succeeds only if attempt owns the key, the
	// key is in progress and its lease has not ended; otherwise it returns
	// ErrLeaseExpired (the record is gone or its lease ended), ErrConflict
	// (another fingerprint holds the key) or ErrStaleAttempt (another
	// attempt owns it, or this one already finished it).
	Complete(ctx context.Context, k Key, fingerprint string, attempt uint64, response []byte) error

	// Fail ends attempt without a response, under the same conditions as
	// Complete. retryable=true releases the key, so the next Begin with
	// the same fingerprint runs the work again; false makes the failure
	// final for the retention period.
	Fail(ctx context.Context, k Key, fingerprint string, attempt uint64, retryable bool) error

	// Renew extends the lease of attempt to a full lease from now, under
	// the same conditions as Complete, and returns the renewed record. A
	// worker whose task may outlast the lease renews it periodically.
	Renew(ctx context.Context, k Key, fingerprint string, attempt uint64) (Record, error)

	// Get returns the live record of k; found is false when there is none
	// (never created, or its lease or retention ended).
	Get(ctx context.Context, k Key) (rec Record, found bool, err error)
}

// Purger is implemented by stores whose expired records take space until
// they are deleted (memory, SQL). Purge deletes expired records and
// returns how many it deleted; expired records are invisible whether or
// not they have been purged.
type Purger interface {
	Purge(ctx context.Context) (int64, error)
}

// Defaults of Policy.
const (
	// DefaultLease is long enough for ordinary request handlers; raise it
	// (or renew) for longer work.
	DefaultLease = time.Minute
	// DefaultRetention matches common practice (Stripe keeps keys 24 h).
	DefaultRetention = 24 * time.Hour
	// MinDuration is the resolution of every backend's expiry; shorter
	// leases and retentions are refused.
	MinDuration = time.Millisecond
)

// Policy sets how long records count. The zero value is the default
// policy.
type Policy struct {
	// Lease bounds how long an in-progress record blocks duplicates: when
	// the owner neither finishes nor renews within it, the next Begin
	// takes the key over. Default DefaultLease.
	Lease time.Duration
	// Retention bounds how long a finished outcome is replayed (and a
	// retryable record keeps the key bound to its fingerprint). Default
	// DefaultRetention.
	Retention time.Duration
}

// Normalize returns p with zero durations replaced by the defaults. It
// refuses, with an IllegalArgument error, a duration that is negative or
// shorter than MinDuration.
func (p Policy) Normalize() (Policy, error) {
	if p.Lease == 0 {
		p.Lease = DefaultLease
	}
	if p.Retention == 0 {
		p.Retention = DefaultRetention
	}
	if p.Lease < MinDuration || p.Retention < MinDuration {
		return p, factum.IllegalArgument("idempotency: lease " + p.Lease.String() + " and retention " +
			p.Retention.String() + " must each be at least " + MinDuration.String())
	}
	return p, nil
}
