package redis

import goredis "github.com/redis/go-redis/v9"

// The Lua scripts of IdempotencyStore. They restate the rules of
// idempotency.BeginExisting and idempotency.CheckOwner, which a script
// cannot call; idempotencytest holds them to the same answers.
//
// A record is one hash: s (state), f (fingerprint), a (attempt), e (expiry,
// Unix milliseconds, Redis's clock) and r (response, done records only),
// with PEXPIREAT set to e, so Redis deletes it when its lease or retention
// ends. A record is live strictly before e; the scripts treat a record at
// its expiry instant as gone although Redis deletes it one millisecond
// later.
//
// Numbers cross into Redis as strings formatted with %.0f: passing a Lua
// number to redis.call would format it with 14 significant digits and
// lose the low digits of an attempt.

// idemBeginScript claims KEYS[1] for fingerprint ARGV[1] with a lease of
// ARGV[2] milliseconds.
//
// The attempt is the larger of Redis's clock in microseconds and the
// record's last attempt plus one. While a record lives, attempts rise by
// one at least; when it has expired, Redis's clock has moved past every
// attempt it handed out (an attempt runs ahead of the clock by at most one
// per Begin inside the same microsecond, and a record lives at least a
// millisecond). So every new owner gets a higher attempt than any earlier
// owner of the key, without a counter that outlives the record.
//
// Replies: {"created", attempt, expiry} | {"conflict"} |
// {state, attempt, expiry, response} for a live record of another state.
var idemBeginScript = goredis.NewScript(`
local t = redis.call('TIME')
local nowms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nowus = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cur = redis.call('HMGET', KEYS[1], 's', 'f', 'a', 'e', 'r')
local prev = 0
if cur[1] and tonumber(cur[4]) > nowms then
  if cur[2] ~= ARGV[1] then
    return {'conflict'}
  end
  if cur[1] ~= 'retryable' then
    return {cur[1], cur[3], cur[4], cur[5] or ''}
  end
end
if cur[3] then
  prev = tonumber(cur[3])
end
local attempt = nowus
if attempt <= prev then
  attempt = prev + 1
end
local a = string.format('%.0f', attempt)
local e = string.format('%.0f', nowms + tonumber(ARGV[2]))
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 's', 'in_progress', 'f', ARGV[1], 'a', a, 'e', e)
redis.call('PEXPIREAT', KEYS[1], e)
return {'created', a, e}
`)

// idemOwnerScript applies a transition of the owning attempt to KEYS[1]:
// fingerprint ARGV[1], attempt ARGV[2], new state ARGV[3] (in_progress to
// renew the lease), validity ARGV[4] milliseconds from now, response
// ARGV[5] (done only).
//
// Replies: {"ok", expiry} | {"expired"} | {"conflict"} | {"stale"}.
var idemOwnerScript = goredis.NewScript(`
local t = redis.call('TIME')
local nowms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('HMGET', KEYS[1], 's', 'f', 'a', 'e')
if not cur[1] or tonumber(cur[4]) <= nowms then
  return {'expired'}
end
if cur[2] ~= ARGV[1] then
  return {'conflict'}
end
if cur[1] ~= 'in_progress' or cur[3] ~= ARGV[2] then
  return {'stale'}
end
local e = string.format('%.0f', nowms + tonumber(ARGV[4]))
redis.call('HSET', KEYS[1], 's', ARGV[3], 'e', e)
if ARGV[3] == 'done' then
  redis.call('HSET', KEYS[1], 'r', ARGV[5])
end
redis.call('PEXPIREAT', KEYS[1], e)
return {'ok', e}
`)

// idemGetScript reads the live record of KEYS[1] by the scripts' rule:
// Redis deletes a record one millisecond after its expiry instant, and
// until then a plain read would still find it.
//
// Replies: false | {state, fingerprint, attempt, expiry, response}.
var idemGetScript = goredis.NewScript(`
local t = redis.call('TIME')
local nowms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('HMGET', KEYS[1], 's', 'f', 'a', 'e', 'r')
if not cur[1] or tonumber(cur[4]) <= nowms then
  return false
end
return {cur[1], cur[2] or '', cur[3] or '', cur[4], cur[5] or ''}
`)
