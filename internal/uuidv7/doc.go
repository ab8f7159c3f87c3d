// Package uuidv7 makes UUIDv7 IDs (RFC 9562) fast: one compare-and-swap
// and one allocation per batch of IDs, with randomness read from
// crypto/rand in batches. factum.NewID and the command
// processors draw from it; it is internal so that this optimisation stays
// out of factum's public types.
package uuidv7
