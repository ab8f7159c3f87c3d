// Package idempotencymodel checks an idempotency-key store against a model
// with property-based state-machine testing (pgregory.net/rapid): random
// sequences of Begin, Complete, Fail, Renew and Get over a few keys and
// two fingerprints, with current and stale attempts, and concurrent Begins
// racing for one claimable key, each compared with the life cycle the
// store contract states. Leases and retention are the defaults (a minute,
// a day): nothing expires during a run, so expiry edges stay with the
// contract kit, away from wall-clock timing.
package idempotencymodel
