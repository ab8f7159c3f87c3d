package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/prepare"
	goredis "github.com/redis/go-redis/v9"
)

// DefaultPreparePrefix begins the Redis key of every reservation unless
// PrepareOptions says otherwise.
const DefaultPreparePrefix = "factum:prepare:"

// PrepareOptions configures NewPrepareBackend. The zero value is the
// documented default.
type PrepareOptions struct {
	// Prefix begins every Redis key the backend writes (default
	// DefaultPreparePrefix). It must not contain '{' or '}', which would
	// move the hash tag.
	Prefix string
}

// PrepareBackend stores prepare-key reservations in Redis. It implements
// prepare.Backend and prepare.KeyChanger and is safe for concurrent use.
//
// A reservation of key under name is the string "<prefix>{<name>}:<key>"
// holding the encoded value. Prepare is one SET … NX PXAT command; the
// compare-and-delete, compare-and-set and key-change operations are Lua
// scripts, called by SHA with a fallback to EVAL when the script cache is
// empty (after a restart or SCRIPT FLUSH). Nothing is read in Go and then
// written.
//
// Expiry is Redis's own: a finite reservation is written with PXAT, so the
// Redis server's clock judges it, and the key disappears when it lapses.
// GetValue therefore reads an expired reservation as absent. Redis 7.0 or
// later is required (PEXPIRETIME).
//
// Cluster: the name is the hash tag ("{name}"), so all keys of one name
// live in one hash slot. That is what makes the key-change script legal on
// a cluster, which refuses scripts touching keys in two slots; the price is
// that one name's reservations are served by one shard.
//
// Durability: Redis acknowledges a write before it is on disk or on a
// replica unless configured otherwise, so after a crash or a failover a
// reservation can be forgotten and the key granted twice. Keep permanent
// reservations (usernames) on the SQL backends; use Redis for temporary
// ones, or run it with appendfsync always and WAIT-ed replication.
type PrepareBackend struct {
	client goredis.UniversalClient
	prefix string
}

var (
	_ prepare.Backend    = (*PrepareBackend)(nil)
	_ prepare.KeyChanger = (*PrepareBackend)(nil)
)

// NewPrepareBackend returns a backend over client (a *goredis.Client,
// *goredis.ClusterClient or other UniversalClient). It does not contact the
// server.
func NewPrepareBackend(client goredis.UniversalClient, opts PrepareOptions) (*PrepareBackend, error) {
	if client == nil {
		return nil, factum.IllegalArgument("redis: nil client")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPreparePrefix
	}
	if strings.ContainsAny(opts.Prefix, "{}") {
		return nil, factum.IllegalArgument(fmt.Sprintf("redis: prepare prefix %q contains '{' or '}'", opts.Prefix))
	}
	return &PrepareBackend{client: client, prefix: opts.Prefix}, nil
}

// redisKey returns the Redis key of (name, key). name has no braces
// (factum.ValidateName), so "{name}" is the hash tag whatever key holds.
func (b *PrepareBackend) redisKey(name, key string) string {
	return b.prefix + "{" + name + "}:" + key
}

// expiryArg is the expiry as a script argument: "0" for none.
func expiryArg(expiresAt int64) int64 {
	if expiresAt == prepare.TTLForever {
		return 0
	}
	return expiresAt
}

// Prepare implements prepare.Backend with SET NX, and PXAT for a finite
// expiry.
func (b *PrepareBackend) Prepare(ctx context.Context, name, key string, value []byte, expiresAt int64) (bool, error) {
	k := b.redisKey(name, key)
	var cmd *goredis.Cmd
	if expiresAt == prepare.TTLForever {
		cmd = b.client.Do(ctx, "SET", k, value, "NX")
	} else {
		cmd = b.client.Do(ctx, "SET", k, value, "NX", "PXAT", expiresAt)
	}
	switch err := cmd.Err(); {
	case errors.Is(err, goredis.Nil):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("redis: prepare: %w", err)
	}
	return true, nil
}

// getScript reads the value and its absolute expiry in one step.
var getScript = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return false end
return {v, redis.call('PEXPIRETIME', KEYS[1])}
`)

// Get implements prepare.Backend. Redis drops expired keys, so a record it
// returns is live.
func (b *PrepareBackend) Get(ctx context.Context, name, key string) (prepare.Record, bool, error) {
	res, err := getScript.Run(ctx, b.client, []string{b.redisKey(name, key)}).Slice()
	switch {
	case errors.Is(err, goredis.Nil):
		return prepare.Record{}, false, nil
	case err != nil:
		return prepare.Record{}, false, fmt.Errorf("redis: get: %w", err)
	}
	v, ok1 := res[0].(string)
	exp, ok2 := res[1].(int64)
	if len(res) != 2 || !ok1 || !ok2 {
		return prepare.Record{}, false, fmt.Errorf("redis: get: unexpected reply %v", res)
	}
	if exp < 0 { // -1: no expiry
		exp = prepare.TTLForever
	}
	return prepare.Record{Value: []byte(v), ExpiresAt: exp}, true, nil
}

// Rollback implements prepare.Backend with DEL.
func (b *PrepareBackend) Rollback(ctx context.Context, name, key string) (bool, error) {
	n, err := b.client.Del(ctx, b.redisKey(name, key)).Result()
	if err != nil {
		return false, fmt.Errorf("redis: rollback: %w", err)
	}
	return n > 0, nil
}

// rollbackValueScript deletes the key if it holds ARGV[1]. GET of a missing
// key is false in Lua, which equals no string.
var rollbackValueScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
`)

// RollbackValue implements prepare.Backend.
func (b *PrepareBackend) RollbackValue(ctx context.Context, name, key string, value []byte) (bool, error) {
	n, err := rollbackValueScript.Run(ctx, b.client, []string{b.redisKey(name, key)}, value).Int64()
	if err != nil {
		return false, fmt.Errorf("redis: rollback value: %w", err)
	}
	return n == 1, nil
}

// reprepareScript replaces ARGV[1] by ARGV[2] with expiry ARGV[3] ("0":
// none). A missing key reads as Lua false, which is never equal to the old
// value's string, so the script returns 0 and creates nothing. (The
// reference compared that false with nil, found them different, and SET
// the missing key.)
var reprepareScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return 0
end
if ARGV[3] == '0' then
	redis.call('SET', KEYS[1], ARGV[2])
else
	redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
end
return 1
`)

// Reprepare implements prepare.Backend.
func (b *PrepareBackend) Reprepare(ctx context.Context, name, key string, oldValue, newValue []byte, expiresAt int64) (bool, error) {
	n, err := reprepareScript.Run(ctx, b.client, []string{b.redisKey(name, key)}, oldValue, newValue, expiryArg(expiresAt)).Int64()
	if err != nil {
		return false, fmt.Errorf("redis: reprepare: %w", err)
	}
	return n == 1, nil
}

// changeKeyScript moves KEYS[1] holding ARGV[1] to KEYS[2] holding ARGV[2]
// with expiry ARGV[3] ("0": none). It returns 0 when KEYS[2] is taken, -1
// when KEYS[1] does not hold ARGV[1], and 1 when it moved. Both keys carry
// the same hash tag, so they share a slot on a cluster.
var changeKeyScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then
	return 0
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return -1
end
redis.call('DEL', KEYS[1])
if ARGV[3] == '0' then
	redis.call('SET', KEYS[2], ARGV[2])
else
	redis.call('SET', KEYS[2], ARGV[2], 'PXAT', ARGV[3])
end
return 1
`)

// ChangeKey implements prepare.KeyChanger in one script.
func (b *PrepareBackend) ChangeKey(ctx context.Context, name, oldKey string, oldValue []byte, newKey string, newValue []byte, expiresAt int64) (bool, error) {
	keys := []string{b.redisKey(name, oldKey), b.redisKey(name, newKey)}
	n, err := changeKeyScript.Run(ctx, b.client, keys, oldValue, newValue, expiryArg(expiresAt)).Int64()
	if err != nil {
		return false, fmt.Errorf("redis: change key: %w", err)
	}
	switch n {
	case 1:
		return true, nil
	case 0:
		return false, nil
	default:
		return false, prepare.ErrNotHeld
	}
}
