package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/idempotency"
)

// FinishFunc applies an owner transition of an idempotency record: it
// moves the record of k to state, with response, valid for validity, if
// attempt owns it with fingerprint, and returns the new expiry; otherwise
// it returns the idempotency.Refusal for op. Owners call it only with an
// attempt that fits an int64 (a higher one was never granted).
type FinishFunc func(ctx context.Context, op string, k idempotency.Key, fingerprint string, attempt uint64,
	state idempotency.State, response []byte, validity time.Duration) (time.Time, error)

// Owners are the owner transitions of idempotency.Store.
type Owners interface {
	Complete(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, response []byte) error
	Fail(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, retryable bool) error
	Renew(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64) (idempotency.Record, error)
}

// NewOwners returns the owner transitions of a store with policy p over
// finish, the backend's one statement (or transaction) for all of them.
func NewOwners(p idempotency.Policy, finish FinishFunc) Owners { return owners{p, finish} }

type owners struct {
	policy idempotency.Policy
	finish FinishFunc
}

// apply runs the transition op through finish. An attempt beyond int64,
// which no store grants, is stale without a statement.
func (o owners) apply(ctx context.Context, op string, k idempotency.Key, fingerprint string, attempt uint64,
	state idempotency.State, response []byte, validity time.Duration) (time.Time, error) {
	if attempt > 1<<63-1 {
		return time.Time{}, idempotency.OpError(op, k, idempotency.ErrStaleAttempt)
	}
	return o.finish(ctx, op, k, fingerprint, attempt, state, response, validity)
}

// Complete implements idempotency.Store.
func (o owners) Complete(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, response []byte) error {
	if response == nil {
		response = []byte{} // done records hold a response, if an empty one
	}
	_, err := o.apply(ctx, "complete", k, fingerprint, attempt, idempotency.StateDone, response, o.policy.Retention)
	return err
}

// Fail implements idempotency.Store.
func (o owners) Fail(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, retryable bool) error {
	state := idempotency.StateFailed
	if retryable {
		state = idempotency.StateRetryable
	}
	_, err := o.apply(ctx, "fail", k, fingerprint, attempt, state, nil, o.policy.Retention)
	return err
}

// Renew implements idempotency.Store.
func (o owners) Renew(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64) (idempotency.Record, error) {
	exp, err := o.apply(ctx, "renew", k, fingerprint, attempt, idempotency.StateInProgress, nil, o.policy.Lease)
	if err != nil {
		return idempotency.Record{}, err
	}
	return idempotency.Record{State: idempotency.StateInProgress, Fingerprint: fingerprint, ExpiresAt: exp, Attempt: attempt}, nil
}

// SetupIdempotency is the set-up of an idempotency store: it normalises p,
// checks prefix ("" is def) is a plain identifier part the dialect can
// name tables with, and applies the idempotency migrations of fsys to db
// (component "idempotency", or "idempotency:<prefix>" for a prefix other
// than def). It returns the policy and the names of the keys table and the
// attempts counter.
func SetupIdempotency(ctx context.Context, d *Dialect, db Migrator, fsys fs.FS, p idempotency.Policy, prefix, def string) (_ idempotency.Policy, keys, attempts string, _ error) {
	if db == nil {
		return p, "", "", factum.IllegalArgument(d.Name + ": nil DB")
	}
	p, err := p.Normalize()
	if err != nil {
		return p, "", "", err
	}
	component := "idempotency"
	if prefix == "" {
		prefix = def
	} else if prefix != def {
		component += ":" + prefix
	}
	if err := checkPrefix(d, prefix); err != nil {
		return p, "", "", err
	}
	if err := db.Migrate(ctx, fsys, "migrations/idempotency", component, prefix); err != nil {
		return p, "", "", err
	}
	return p, prefix + "idempotency_keys", prefix + "idempotency_attempts", nil
}

// checkPrefix refuses a table prefix that is not a plain identifier part:
// letters (lower-case only where the dialect folds names), digits and
// '_', not starting with a digit.
func checkPrefix(d *Dialect, prefix string) error {
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if !(c >= 'a' && c <= 'z' || !d.LowerCaseNames && c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			letters := "letters"
			if d.LowerCaseNames {
				letters = "lower-case letters"
			}
			return factum.IllegalArgument(fmt.Sprintf("%s: table prefix %q: want %s, digits and '_', not starting with a digit", d.Name, prefix, letters))
		}
	}
	return nil
}

// ShapeResponse keeps a record's response only when it is done, and gives
// a done record an empty response rather than none: what a stored row
// holds, as the contract answers it.
func ShapeResponse(rec *idempotency.Record) {
	if rec.State != idempotency.StateDone {
		rec.Response = nil
	} else if rec.Response == nil {
		rec.Response = []byte{}
	}
}

// IdempotencyBackend is the idempotency.Backend of a SQL store: the shared
// owner transitions and the dialect's Begin and Get. A backend's
// constructor puts the idempotency front end over it.
type IdempotencyBackend struct {
	Owners
	BeginFunc func(ctx context.Context, k idempotency.Key, fingerprint string) (idempotency.Record, bool, error)
	GetFunc   func(ctx context.Context, k idempotency.Key) (idempotency.Record, bool, error)
}

// Begin implements idempotency.Backend.
func (b *IdempotencyBackend) Begin(ctx context.Context, k idempotency.Key, fingerprint string) (idempotency.Record, bool, error) {
	return b.BeginFunc(ctx, k, fingerprint)
}

// Get implements idempotency.Backend.
func (b *IdempotencyBackend) Get(ctx context.Context, k idempotency.Key) (idempotency.Record, bool, error) {
	return b.GetFunc(ctx, k)
}

var _ idempotency.Backend = (*IdempotencyBackend)(nil)
