// Package storagetest is the contract kit of storage handles: the values
// engine.Config's Storage takes (memory.New, sqlite.Open, postgres.Open,
// or a user's). Run checks that a handle serves any number of bounded
// contexts, one store of each kind per context to every caller, that an
// engine runs on it, and that Close closes it.
package storagetest
