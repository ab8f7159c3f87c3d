// Package codec maps message names to Go types and encodes message bodies as
// JSON.
//
// A [Registry] belongs to one runtime; there is no global registry. Each
// registered type has a name (snake_case of the Go type name by default) and
// a schema revision. Bodies stored at an older revision are brought up to
// date by upcasters, keyed by (name, from-revision) and applied in a chain
// when decoding. Decoding a name the registry does not know is an
// [*UnknownTypeError] that names it.
package codec
