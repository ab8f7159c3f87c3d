// Package idempotency makes an operation safe to retry: the first request
// carrying a client's key does the work, and every repeat of it gets the
// first outcome back instead of doing the work again.
//
// A [Key] is the client's value scoped by tenant and operation. A [Store]
// keeps one [Record] per key and moves it through a small state machine:
//
//	absent ──Begin──► in progress ──Complete──► done       (replayed until retention ends)
//	                       │      └──Fail(false)► failed     (answered until retention ends)
//	                       │      └──Fail(true)─► retryable  (the next Begin takes over)
//	                       └─ lease ends ─► absent (the next Begin takes over)
//
// [Store.Begin] makes exactly one caller the owner of a key, however many
// ask at once, in this process or others. The owner holds a lease
// ([Policy.Lease]) and an attempt number. While the lease runs, duplicates
// get [ErrInProgress]; a request reusing the key with another payload
// (fingerprint) gets [ErrConflict] on every path, replays included. If the
// owner dies, its lease ends and the next Begin takes the key over with a
// higher attempt; the attempt is a fencing token, so the stale owner can
// then neither complete, fail nor renew the key ([ErrStaleAttempt]). A
// finished key replays its outcome until [Policy.Retention] ends, after
// which it is forgotten.
//
// A backend implements the small contract [Backend]; the front end
// [Front] makes the checks every backend would otherwise repeat (the
// context, the key, the fingerprint, the attempt) and names the operation
// and the key in a refusal. The constructors apply it, so a user passes the
// store around as a Store and never meets the split.
//
// Backends: [Memory] here (the reference implementation, with an
// injectable clock); Redis, SQLite and PostgreSQL in the adapter packages.
// Each is atomic inside its backend (a mutex, one Lua script, one
// conditional SQL statement), and all pass the contract kit in
// idempotencytest, which checks concurrent histories for linearizability
// too. Each judges expiry by one clock, read at the moment a record is
// written, never before a wait for a lock:
//
//	Memory                        MemoryConfig.Clock, under the shard lock
//	redis.IdempotencyStore        Redis's clock (TIME), inside each script
//	sqlite.IdempotencyStore       IdempotencyOptions.Clock, inside the write transaction
//	postgres.IdempotencyStore     the database's clock_timestamp(), once the row is locked
//
// So once anyone has been told that a lease lapsed (a Get, a refused
// call, a takeover), the old owner can no longer complete, fail or renew
// the key, and the attempts owners get rise strictly in the order they
// were granted the key. The rules live in [BeginExisting] and [CheckOwner];
// backends that write with Lua or SQL restate them there and use these
// functions to classify what they read back.
//
// [Middleware] applies the store to net/http, following the IETF
// Idempotency-Key draft: a missing key where required is 400, a request
// still in progress 409 with Retry-After, a reused key with another
// payload 422, and a finished request is replayed with
// Idempotent-Replayed: true. Errors are application/problem+json. Keys are
// scoped by the request's tenant (by default the one in its context,
// factum.TenantFromContext, which package httpapi sets) and, with
// MiddlewareOptions.Principal, by the caller: one tenant's or caller's key
// never replays to, blocks or conflicts with another's.
//
// The store is not a transaction with the work it protects. When the work
// is a factum command, pass the key (or a request ID derived from it) as
// the command's request ID too: the event store's unique request ID is
// then a second fence, which holds even if an idempotency record is lost
// or released. The middleware hands its key to the handler
// ([KeyFromContext]) and [RequestID] derives the request ID; package
// httpapi sends commands that carry an Idempotency-Key and no request ID
// with it. A wait that times out (408) releases the key, still bound to
// its payload, because the outcome is unknown, not failed: the retry runs
// the route again and the event store answers it with the first attempt's
// outcome instead of appending the command twice.
package idempotency
