package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/factum-go/factum/idempotency"
	goredis "github.com/redis/go-redis/v9"
)

// DefaultIdempotencyPrefix starts the name of every record of an
// IdempotencyStore unless IdempotencyOptions.Prefix says otherwise.
const DefaultIdempotencyPrefix = "factum:idempotency:"

// IdempotencyOptions configures NewIdempotencyStore.
type IdempotencyOptions struct {
	// Policy sets the lease and the retention; the zero value is the
	// default policy.
	Policy idempotency.Policy
	// Prefix starts every Redis key the store writes (default
	// DefaultIdempotencyPrefix), so several stores can share a server.
	Prefix string
}

// IdempotencyStore is an idempotency.Store on Redis. Each record is one
// hash that Redis expires by itself (PEXPIREAT) when its lease or its
// retention ends; every operation, Get included, is one Lua script, so it
// is atomic however many processes share the server. Expiry is judged by
// Redis's clock, read with TIME inside the script that judges it: a record
// is gone from its expiry millisecond on, in every script, although Redis
// deletes the hash a millisecond later. Each operation touches exactly one
// key, so the store works on a Redis Cluster too.
//
// Attempt numbers come from Redis's clock in microseconds, kept strictly
// rising per key: an owner that takes a key over always holds a higher
// attempt than every earlier owner, as long as Redis's clock does not step
// back by more than a lease.
//
// Records are only as durable as Redis: see the package documentation. A
// record lost in a crash lets a duplicate request run again.
//
// An IdempotencyStore is the idempotency front end over the Redis
// backend.
type IdempotencyStore struct {
	*idempotency.Front
	client goredis.UniversalClient
	policy idempotency.Policy
	prefix string
}

// idemBackend is the store's idempotency.Backend: the scripts.
type idemBackend IdempotencyStore

// NewIdempotencyStore returns a store on client. It fails with an
// IllegalArgument error for an invalid policy.
func NewIdempotencyStore(client goredis.UniversalClient, opts IdempotencyOptions) (*IdempotencyStore, error) {
	p, err := opts.Policy.Normalize()
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, errors.New("redis: idempotency store: nil client")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultIdempotencyPrefix
	}
	s := &IdempotencyStore{client: client, policy: p, prefix: opts.Prefix}
	s.Front = idempotency.NewFront((*idemBackend)(s))
	return s, nil
}

// Policy returns the store's lease and retention.
func (s *IdempotencyStore) Policy() idempotency.Policy { return s.policy }

// redisKey names the record of k. Tenant and operation are length-prefixed,
// so no spelling of the parts can make two keys share a name.
func (s *idemBackend) redisKey(k idempotency.Key) string {
	b := make([]byte, 0, len(s.prefix)+len(k.Tenant)+len(k.Operation)+len(k.Value)+10)
	b = append(b, s.prefix...)
	b = strconv.AppendInt(b, int64(len(k.Tenant)), 10)
	b = append(b, ':')
	b = append(b, k.Tenant...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(len(k.Operation)), 10)
	b = append(b, ':')
	b = append(b, k.Operation...)
	b = append(b, ':')
	b = append(b, k.Value...)
	return string(b)
}

// Begin implements idempotency.Backend.
func (s *idemBackend) Begin(ctx context.Context, k idempotency.Key, fingerprint string) (idempotency.Record, bool, error) {
	reply, err := idemBeginScript.Run(ctx, s.client, []string{s.redisKey(k)},
		fingerprint, s.policy.Lease.Milliseconds()).StringSlice()
	if err != nil {
		return idempotency.Record{}, false, fmt.Errorf("redis: idempotency begin %s: %w", k, err)
	}
	if len(reply) == 1 && reply[0] == "conflict" {
		return idempotency.Record{}, false, idempotency.OpError("begin", k, idempotency.ErrConflict)
	}
	if len(reply) < 3 {
		return idempotency.Record{}, false, fmt.Errorf("redis: idempotency begin %s: unexpected reply %q", k, reply)
	}
	rec := idempotency.Record{State: idempotency.State(reply[0]), Fingerprint: fingerprint}
	if rec.Attempt, err = strconv.ParseUint(reply[1], 10, 64); err != nil {
		return idempotency.Record{}, false, fmt.Errorf("redis: idempotency begin %s: attempt %q: %w", k, reply[1], err)
	}
	if rec.ExpiresAt, err = parseMillis(reply[2]); err != nil {
		return idempotency.Record{}, false, fmt.Errorf("redis: idempotency begin %s: %w", k, err)
	}
	if reply[0] == "created" {
		rec.State = idempotency.StateInProgress
		return rec, true, nil
	}
	if !rec.State.Valid() || len(reply) != 4 {
		return idempotency.Record{}, false, fmt.Errorf("redis: idempotency begin %s: unexpected reply %q", k, reply[:1])
	}
	if rec.State == idempotency.StateDone {
		rec.Response = []byte(reply[3])
	}
	// The script has already checked the fingerprint and the state; the
	// shared rules turn the record into the answer and its error.
	rec, _, err = idempotency.BeginExisting(k, rec, fingerprint)
	return rec, false, err
}

// owner runs the owner transition script for op.
func (s *idemBackend) owner(ctx context.Context, op string, k idempotency.Key, fingerprint string, attempt uint64,
	state idempotency.State, validity time.Duration, response []byte) (time.Time, error) {
	reply, err := idemOwnerScript.Run(ctx, s.client, []string{s.redisKey(k)},
		fingerprint, strconv.FormatUint(attempt, 10), string(state), validity.Milliseconds(), response).StringSlice()
	if err != nil {
		return time.Time{}, fmt.Errorf("redis: idempotency %s %s: %w", op, k, err)
	}
	switch {
	case len(reply) == 2 && reply[0] == "ok":
		exp, err := parseMillis(reply[1])
		if err != nil {
			return time.Time{}, fmt.Errorf("redis: idempotency %s %s: %w", op, k, err)
		}
		return exp, nil
	case len(reply) == 1 && reply[0] == "expired":
		return time.Time{}, idempotency.OpError(op, k, idempotency.ErrLeaseExpired)
	case len(reply) == 1 && reply[0] == "conflict":
		return time.Time{}, idempotency.OpError(op, k, idempotency.ErrConflict)
	case len(reply) == 1 && reply[0] == "stale":
		return time.Time{}, idempotency.OpError(op, k, idempotency.ErrStaleAttempt)
	}
	return time.Time{}, fmt.Errorf("redis: idempotency %s %s: unexpected reply %q", op, k, reply)
}

// Complete implements idempotency.Backend.
func (s *idemBackend) Complete(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, response []byte) error {
	if response == nil {
		response = []byte{}
	}
	_, err := s.owner(ctx, "complete", k, fingerprint, attempt, idempotency.StateDone, s.policy.Retention, response)
	return err
}

// Fail implements idempotency.Backend.
func (s *idemBackend) Fail(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64, retryable bool) error {
	state := idempotency.StateFailed
	if retryable {
		state = idempotency.StateRetryable
	}
	_, err := s.owner(ctx, "fail", k, fingerprint, attempt, state, s.policy.Retention, []byte{})
	return err
}

// Renew implements idempotency.Backend.
func (s *idemBackend) Renew(ctx context.Context, k idempotency.Key, fingerprint string, attempt uint64) (idempotency.Record, error) {
	exp, err := s.owner(ctx, "renew", k, fingerprint, attempt, idempotency.StateInProgress, s.policy.Lease, []byte{})
	if err != nil {
		return idempotency.Record{}, err
	}
	return idempotency.Record{State: idempotency.StateInProgress, Fingerprint: fingerprint, ExpiresAt: exp, Attempt: attempt}, nil
}

// Get implements idempotency.Backend. It is one script, which judges expiry
// by Redis's clock as the other scripts do: a record is gone at its expiry
// millisecond, although Redis deletes the hash a millisecond later.
func (s *idemBackend) Get(ctx context.Context, k idempotency.Key) (idempotency.Record, bool, error) {
	vals, err := idemGetScript.Run(ctx, s.client, []string{s.redisKey(k)}).StringSlice()
	switch {
	case errors.Is(err, goredis.Nil):
		return idempotency.Record{}, false, nil
	case err != nil:
		return idempotency.Record{}, false, fmt.Errorf("redis: idempotency get %s: %w", k, err)
	case len(vals) != 5:
		return idempotency.Record{}, false, fmt.Errorf("redis: idempotency get %s: unexpected reply %q", k, vals)
	}
	rec := idempotency.Record{State: idempotency.State(vals[0]), Fingerprint: vals[1]}
	if rec.Attempt, err = strconv.ParseUint(vals[2], 10, 64); err != nil || !rec.State.Valid() {
		return idempotency.Record{}, false, fmt.Errorf("redis: idempotency get %s: malformed record (state %q, attempt %q)", k, vals[0], vals[2])
	}
	if rec.ExpiresAt, err = parseMillis(vals[3]); err != nil {
		return idempotency.Record{}, false, fmt.Errorf("redis: idempotency get %s: %w", k, err)
	}
	if rec.State == idempotency.StateDone {
		rec.Response = []byte(vals[4])
	}
	return rec, true, nil
}

func parseMillis(s string) (time.Time, error) {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("expiry %q: %w", s, err)
	}
	return time.UnixMilli(ms), nil
}
