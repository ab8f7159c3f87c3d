package sqlstore

import (
	"context"
	"io/fs"
	"time"

	"github.com/factum-go/factum/idempotency"
)

// FinishFunc applies an owner transition of an idempotency record: it
// moves the record of k to state, with response, valid for validity, if
// attempt owns it with fingerprint, and returns the new expiry; otherwise
// it returns the idempotency.Refusal for op.
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

// Complete implements idempotency.Store.
func (o owners) Complete(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, response []byte) error {
	if response == nil {
		response = []byte{} // done records hold a response, if an empty one
	}
	_, err := o.finish(ctx, "complete", k, fingerprint, attempt, idempotency.StateDone, response, o.policy.Retention)
	return err
}

// Fail implements idempotency.Store.
func (o owners) Fail(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, retryable bool) error {
	state := idempotency.StateFailed
	if retryable {
		state = idempotency.StateRetryable
	}
	_, err := o.finish(ctx, "fail", k, fingerprint, attempt, state, nil, o.policy.Retention)
	return err
}

// Renew implements idempotency.Store.
func (o owners) Renew(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64) (idempotency.Record, error) {
	exp, err := o.finish(ctx, "renew", k, fingerprint, attempt, idempotency.StateInProgress, nil, o.policy.Lease)
	if err != nil {
		return idempotency.Record{}, err
	}
	return idempotency.Record{State: idempotency.StateInProgress, Fingerprint: fingerprint, ExpiresAt: exp, Attempt: attempt}, nil
}

// SetupIdempotency is the set-up of an idempotency store: it normalises p,
// checks prefix with valid ("" is def), and applies the idempotency
// migrations of fsys to db (component "idempotency", or
// "idempotency:<prefix>" for a prefix other than def). It returns the
// policy and the names of the keys table and the attempts counter.
func SetupIdempotency(ctx context.Context, db Migrator, fsys fs.FS, p idempotency.Policy, prefix, def string, valid func(prefix string) error) (_ idempotency.Policy, keys, attempts string, _ error) {
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
	if err := valid(prefix); err != nil {
		return p, "", "", err
	}
	if err := db.Migrate(ctx, fsys, "migrations/idempotency", component, prefix); err != nil {
		return p, "", "", err
	}
	return p, prefix + "idempotency_keys", prefix + "idempotency_attempts", nil
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
