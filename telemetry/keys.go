package telemetry

import (
	"context"
	"errors"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/prepare"
	"github.com/prometheus/client_golang/prometheus"
)

// IdempotencyStore returns next counting its calls by operation and
// outcome (factum_idempotency_key_operations_total): a Begin that creates
// the key, replays a finished one (done, failed), finds it in progress or
// bound to another payload; a Complete, Fail or Renew that holds or lost
// the lease. A store that purges keeps purging. Without metrics next is
// returned as it is.
func (t *Telemetry) IdempotencyStore(next idempotency.Store) idempotency.Store {
	if t.m == nil || next == nil {
		return next
	}
	s := &idemStore{next: next, opCounter: opCounter{t.m.idempotency}}
	if p, ok := next.(idempotency.Purger); ok {
		return &idemPurger{idemStore: s, purger: p}
	}
	return s
}

// opCounter counts a decorator's calls by operation and outcome.
type opCounter struct{ ops *prometheus.CounterVec }

func (c opCounter) count(op, outcome string) {
	c.ops.WithLabelValues(op, outcome).Inc()
}

type idemStore struct {
	next idempotency.Store
	opCounter
}

type idemPurger struct {
	*idemStore
	purger idempotency.Purger
}

// Purge implements idempotency.Purger.
func (s *idemPurger) Purge(ctx context.Context) (int64, error) { return s.purger.Purge(ctx) }

// idemOutcome bounds an idempotency store's error to a label.
func idemOutcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, idempotency.ErrConflict):
		return "conflict"
	case errors.Is(err, idempotency.ErrInProgress):
		return "in_progress"
	case errors.Is(err, idempotency.ErrLeaseExpired):
		return "lease_expired"
	case errors.Is(err, idempotency.ErrStaleAttempt):
		return "stale_attempt"
	}
	return errLabel(err)
}

// Begin implements idempotency.Store.
func (s *idemStore) Begin(ctx context.Context, k idempotency.Key, fingerprint string) (idempotency.Record, bool, error) {
	rec, created, err := s.next.Begin(ctx, k, fingerprint)
	outcome := idemOutcome(err)
	switch {
	case err != nil:
	case created:
		outcome = "created"
	case rec.State.Valid():
		outcome = string(rec.State) // done or failed: the key is replayed
	default:
		outcome = "other"
	}
	s.count("begin", outcome)
	return rec, created, err
}

// Complete implements idempotency.Store.
func (s *idemStore) Complete(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, response []byte) error {
	err := s.next.Complete(ctx, k, fingerprint, attempt, response)
	s.count("complete", idemOutcome(err))
	return err
}

// Fail implements idempotency.Store.
func (s *idemStore) Fail(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, retryable bool) error {
	err := s.next.Fail(ctx, k, fingerprint, attempt, retryable)
	s.count("fail", idemOutcome(err))
	return err
}

// Renew implements idempotency.Store.
func (s *idemStore) Renew(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64) (idempotency.Record, error) {
	rec, err := s.next.Renew(ctx, k, fingerprint, attempt)
	s.count("renew", idemOutcome(err))
	return rec, err
}

// Get implements idempotency.Store.
func (s *idemStore) Get(ctx context.Context, k idempotency.Key) (idempotency.Record, bool, error) {
	rec, found, err := s.next.Get(ctx, k)
	s.count("get", found3(found, err))
	return rec, found, err
}

// found3 is the outcome of a read: found, not_found or the error's code.
func found3(found bool, err error) string {
	switch {
	case err != nil:
		return errLabel(err)
	case found:
		return "found"
	}
	return "not_found"
}

// done2 is the outcome of a conditional write: done, refused (the
// condition did not hold) or the error's code.
func done2(done bool, err error) string {
	switch {
	case err != nil:
		return errLabel(err)
	case done:
		return "done"
	}
	return "refused"
}

// PrepareBackend returns next counting its calls by operation and outcome
// (factum_prepare_key_operations_total): a reservation made or refused
// (the key is held), read, rolled back, re-prepared or moved. A backend
// that changes keys atomically keeps doing so. Without metrics next is
// returned as it is.
func (t *Telemetry) PrepareBackend(next prepare.Backend) prepare.Backend {
	if t.m == nil || next == nil {
		return next
	}
	b := &prepBackend{next: next, opCounter: opCounter{t.m.prepare}}
	if c, ok := next.(prepare.KeyChanger); ok {
		return &prepChanger{prepBackend: b, changer: c}
	}
	return b
}

type prepBackend struct {
	next prepare.Backend
	opCounter
}

type prepChanger struct {
	*prepBackend
	changer prepare.KeyChanger
}

// Prepare implements prepare.Backend.
func (b *prepBackend) Prepare(ctx context.Context, name, key string, value []byte, expiresAt int64) (bool, error) {
	ok, err := b.next.Prepare(ctx, name, key, value, expiresAt)
	b.count("prepare", done2(ok, err))
	return ok, err
}

// Get implements prepare.Backend.
func (b *prepBackend) Get(ctx context.Context, name, key string) (prepare.Record, bool, error) {
	rec, found, err := b.next.Get(ctx, name, key)
	b.count("get", found3(found, err))
	return rec, found, err
}

// Rollback implements prepare.Backend.
func (b *prepBackend) Rollback(ctx context.Context, name, key string) (bool, error) {
	ok, err := b.next.Rollback(ctx, name, key)
	b.count("rollback", done2(ok, err))
	return ok, err
}

// RollbackValue implements prepare.Backend.
func (b *prepBackend) RollbackValue(ctx context.Context, name, key string, value []byte) (bool, error) {
	ok, err := b.next.RollbackValue(ctx, name, key, value)
	b.count("rollback_value", done2(ok, err))
	return ok, err
}

// Reprepare implements prepare.Backend.
func (b *prepBackend) Reprepare(ctx context.Context, name, key string, oldValue, newValue []byte, expiresAt int64) (bool, error) {
	ok, err := b.next.Reprepare(ctx, name, key, oldValue, newValue, expiresAt)
	b.count("reprepare", done2(ok, err))
	return ok, err
}

// ChangeKey implements prepare.KeyChanger.
func (b *prepChanger) ChangeKey(ctx context.Context, name, oldKey string, oldValue []byte, newKey string, newValue []byte, expiresAt int64) (bool, error) {
	ok, err := b.changer.ChangeKey(ctx, name, oldKey, oldValue, newKey, newValue, expiresAt)
	outcome := done2(ok, err)
	if errors.Is(err, prepare.ErrNotHeld) {
		outcome = "not_held"
	}
	b.count("change_key", outcome)
	return ok, err
}
