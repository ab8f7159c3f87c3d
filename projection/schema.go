package projection

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/factum-go/factum"
)

// maxIdent is PostgreSQL's identifier limit (SQLite has none); a
// physical table name is checked against it with a build number of
// maxBuildDigits digits.
const (
	maxIdent       = 63
	maxBuildDigits = 6
)

// sqlIdent reports whether s is a lower-case SQL identifier that needs no
// quoting in SQLite or PostgreSQL.
func sqlIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return true
}

func (p *Projection) validateSchema() error {
	if p.version == 0 && len(p.tables) == 0 {
		return nil
	}
	where := "projection " + p.group.Context + "/" + p.group.Processor
	if p.version < 1 {
		return factum.IllegalArgument(fmt.Sprintf("%s: schema version %d: want 1 or more", where, p.version))
	}
	if len(p.tables) == 0 {
		return factum.IllegalArgument(where + ": a Schema declares at least one table")
	}
	if !sqlIdent(p.group.Context) || !sqlIdent(p.group.Processor) {
		return factum.IllegalArgument(where + ": with a Schema, the context and the name are lower-case letters, digits and '_' (they are part of SQL table names)")
	}
	for i, t := range p.tables {
		if !sqlIdent(t) {
			return factum.IllegalArgument(fmt.Sprintf("%s: table name %q: lower-case letters, digits and '_', first a letter", where, t))
		}
		if slices.Contains(p.tables[:i], t) {
			return factum.IllegalArgument(fmt.Sprintf("%s: table %q is declared twice", where, t))
		}
		if n := len(physical(p.group.Context, p.group.Processor, 1, t)) - 1 + maxBuildDigits; n > maxIdent {
			return factum.IllegalArgument(fmt.Sprintf("%s: table %q: its physical name would be %d bytes, more than %d", where, t, n, maxIdent))
		}
	}
	return nil
}

// physical returns the name of table in the given build of the projection
// context/name.
func physical(context, name string, build int, table string) string {
	return "proj_" + context + "_" + name + "_" + strconv.Itoa(build) + "_" + table
}

// Tables maps a build's logical table names to physical ones.
type Tables struct {
	p     *Projection
	build int
}

// TablesOf returns the tables of build number build of p (build 0, or a
// projection without a Schema: the names as declared).
func TablesOf(p *Projection, build int) Tables { return Tables{p: p, build: build} }

// Build returns the build number the tables belong to.
func (t Tables) Build() int { return t.build }

// Name returns the physical name of the declared table name; it panics
// for an undeclared one (a programming error, like a bad regexp in
// regexp.MustCompile). Without a Schema it returns name.
func (t Tables) Name(name string) string {
	if t.p == nil || t.p.version == 0 || t.build == 0 {
		return name
	}
	if !slices.Contains(t.p.tables, name) {
		panic(fmt.Sprintf("projection %s: table %q is not in its Schema", t.p.group, name))
	}
	return physical(t.p.group.Context, t.p.group.Processor, t.build, name)
}

// All returns the physical names of every declared table.
func (t Tables) All() []string {
	out := make([]string, 0, len(t.p.tables))
	for _, n := range t.p.tables {
		out = append(out, t.Name(n))
	}
	return out
}
