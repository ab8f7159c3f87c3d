// Package preparemodel checks a prepare-key backend against a model with
// property-based state-machine testing (pgregory.net/rapid): random
// sequences of Prepare, Get, Rollback, RollbackValue, Reprepare and (where
// the backend has it) ChangeKey over a few keys and values, and concurrent
// Prepares racing for one free key, each compared with a plain map.
// Reservations never expire here (TTLForever, or an expiry hours away):
// expiry edges are the contract kit's business, and wall-clock timing has
// no place in a model.
package preparemodel
