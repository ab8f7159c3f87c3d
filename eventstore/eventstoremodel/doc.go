// Package eventstoremodel checks an event store against a model with
// property-based state-machine testing (pgregory.net/rapid): random
// sequences of appends (hitting every conflict and their precedence),
// loads, lookups, request checks, aggregate scans, global-log reads and
// concurrent appends racing for one version, each compared with what a
// plain in-memory model says must happen. A failing sequence is shrunk to
// a minimal one and printed.
//
// It complements eventstoretest: the kit states each contract case by
// hand; the model finds the combinations nobody wrote down.
package eventstoremodel
