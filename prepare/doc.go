// Package prepare reserves unique application keys — usernames, SKUs, e-mail
// addresses — that many aggregates compete for. A [Key] answers atomically,
// inside its storage backend, which value holds a key right now.
//
// # Operations
//
//	operation                     succeeds when                        false / error means
//	Prepare(key, v)               the key is free or expired           false: a live value holds it
//	Get(key)                      a live value holds the key           false: free or expired
//	GetValue(key)                 a record is stored, even expired     false: nothing stored
//	Rollback(key)                 a live value held it (released)      false: nothing to release
//	RollbackValue(key, v)         v held it (released)                 false: free or another value
//	Reprepare(key, old, new)      old held it (now new does)           false: free or another value
//	ChangeKey(k1, old, k2, new)   k2 was free and old held k1          false: k2 held;
//	                              (now new holds k2, k1 is free)       error: k1 not held by old
//
// A reservation carries an absolute expiry in Unix milliseconds
// ([PreparedValue]), or [TTLForever]. An expired reservation counts as free
// for every operation; Get hides it, GetValue still shows it where the
// backend keeps it. Expiry depends on a clock, each backend's own (see
// below), so it is not a precise timer.
//
// Values are compared by their JSON encoding; see [Key] for what that means
// for struct and map values.
//
// # UsingPrepare
//
// [UsingPrepare] reserves a key, hands the outcome to a function (typically
// a command handler's decision), and releases the reservation if the
// function fails, panics or its context is cancelled. It is not a
// transaction with the event store: read its documentation before using a
// permanent reservation.
//
// Inside a command handler, bind the reservation to the command's append
// instead: [Key.Reserve], [Key.Release] and [Key.Change] return an
// [Effect] the handler passes to aggregate.Bind. The aggregate processor
// applies it before the append, undoes it when the append fails or is
// retried (handlers may run more than once), and keeps it once the events
// are stored; a retry of the same command finds its own reservation (the
// same value) and goes on. This is still not a transaction: a crash
// between the reservation and the append leaves the reservation held for
// a value whose events were never stored, until a retry of the same
// request uses it or it is reconciled.
//
// # Tenants
//
// A Key's names are shared by all tenants unless it is made with
// [PerTenant]: then each tenant has its own names, the tenant coming from
// each call's context (command handlers' contexts carry their command's
// tenant, event functions' the tenant of their stream: sagas and
// projections included). Use PerTenant for anything a tenant's users choose (usernames,
// e-mail addresses): with a shared key one tenant can take another's names
// and probe which ones exist.
//
// Do not mix up three mechanisms: a request ID recognises a repeated
// command; an aggregate version protects one event stream; a prepare key
// arbitrates between aggregates competing for one application key.
//
// # Backends
//
// A [Backend] stores reservations as bytes, atomically. factum provides:
//
//   - [Memory], in process, judging expiry by an injectable clock read
//     under the key's shard lock;
//   - redis.PrepareBackend, with Redis's own expiry (expired keys vanish),
//     judged by Redis's clock when each command or Lua script runs;
//   - sqlite.PrepareBackend, judging expiry by the caller's clock
//     (PrepareOptions.Now), read inside the write transaction once it holds
//     the database's write lock;
//   - postgres.PrepareBackend, judging expiry by the database's clock,
//     clock_timestamp(), read once the statement holds the row's lock.
//
// Each reads its clock at the moment a reservation is written, never
// before a wait for a lock, and a read that finds a lapsed record confirms
// it after any write in flight: once anyone has seen a reservation lapse,
// its old holder can no longer reprepare, release or move it.
//
// All four implement [KeyChanger], so a key change is one atomic step.
// Redis reservations survive a crash or failover only as far as Redis's
// persistence and replication allow; permanent reservations such as
// usernames belong on a SQL backend. Package preparetest is the contract kit
// every backend passes.
package prepare
