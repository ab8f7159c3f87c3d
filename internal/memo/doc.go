// Package memo keeps values made on first use, once per key, and closes
// them together: the per-context stores of a storage handle.
package memo
