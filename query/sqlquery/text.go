package sqlquery

import (
	"github.com/factum-go/factum/query"
)

// text writes CONTAINS, STARTS_WITH and ENDS_WITH with functions that
// take the needle literally (no LIKE wildcards), folding ASCII only.
func (b *builder) text(src source, op query.Operator, needle string, ignoreCase bool) string {
	e := src.str()
	if e == "" {
		return sqlFalse
	}
	if needle == "" {
		return "(" + e + " IS NOT NULL)" // every string holds the empty string
	}
	if ignoreCase {
		needle = foldASCII(needle)
		if b.t.dialect.postgres {
			e = "translate(" + e + ", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
		} else {
			e = "lower(" + e + ")" // SQLite's built-in lower() folds ASCII only
		}
	}
	if b.t.dialect.postgres {
		switch op {
		case query.OpContains:
			return b.coalesce("strpos(" + e + ", " + b.typed(needle) + ") > 0")
		case query.OpStartsWith:
			return b.coalesce("starts_with(" + e + ", " + b.typed(needle) + ")")
		}
		p := b.typed(needle)
		return b.coalesce("right(" + e + ", length(" + p + ")) = " + p)
	}
	switch op {
	case query.OpContains:
		return b.coalesce("instr(" + e + ", " + b.arg(needle) + ") > 0")
	case query.OpStartsWith:
		return b.coalesce("instr(" + e + ", " + b.arg(needle) + ") = 1")
	}
	return b.coalesce("substr(" + e + ", -length(" + b.arg(needle) + ")) = " + b.arg(needle))
}

func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}
