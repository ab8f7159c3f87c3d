// Package quickstart holds the README's "write your own aggregate" example
// as a compiled, tested Example, so the README never shows code that does
// not build.
package quickstart
