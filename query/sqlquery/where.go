package sqlquery

import (
	"fmt"
	"math"
	"strings"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// Translator writes the SQL of query plans for one dialect and schema.
// Every value of a condition becomes a bound argument; field paths, which
// a Planner has checked against the allow-list, are written into the SQL
// as JSON path text, and only column names from the Schema appear as
// identifiers. A Translator is immutable and safe for concurrent use.
type Translator struct {
	dialect Dialect
	schema  Schema
	alias   string
}

// New returns a translator for the dialect and schema.
func New(d Dialect, s Schema) (*Translator, error) {
	if !d.valid {
		return nil, factum.IllegalArgument("sqlquery: no dialect; use SQLite() or PostgreSQL()")
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	alias := s.Alias
	if alias == "" {
		alias = "t"
	}
	return &Translator{dialect: d, schema: s, alias: alias}, nil
}

// Alias returns the table alias the SQL refers to columns by.
func (t *Translator) Alias() string { return t.alias }

// builder accumulates SQL text and its arguments.
type builder struct {
	t     *Translator
	args  []any
	base  int // arguments already bound before this fragment
	depth int // nesting of element subqueries, for unique aliases
	// bare is set while writing the top of a WHERE clause, outside any
	// NOT: there SQL NULL already counts as false, so a comparison needs
	// no COALESCE, and left bare it can use an index on its expression.
	bare bool
}

func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	return b.t.dialect.placeholder(b.base + len(b.args))
}

// typed writes a placeholder with the PostgreSQL type the comparison
// needs, so that the server never has to guess it.
func (b *builder) typed(v any) string {
	p := b.arg(v)
	if !b.t.dialect.postgres {
		return p
	}
	switch v.(type) {
	case string:
		return p + "::text"
	case float64:
		return p + "::float8"
	}
	return p
}

// Where translates a core condition (a Plan's) into a SQL boolean
// expression that is never NULL, and its arguments. Placeholders are
// numbered after argBase arguments bound before it (PostgreSQL).
func (t *Translator) Where(c query.Condition, argBase int) (string, []any, error) {
	return t.where(c, argBase, false)
}

// where is Where; with bare, the result is only ever a WHERE clause of its
// own (Find, Count), so comparisons outside a NOT are left bare.
func (t *Translator) where(c query.Condition, argBase int, bare bool) (string, []any, error) {
	b := &builder{t: t, base: argBase, bare: bare}
	sql, err := b.cond(c, nil, "condition")
	if err != nil {
		return "", nil, err
	}
	return sql, b.args, nil
}

func bad(where string, op query.Operator, what string, v any) error {
	return factum.IllegalArgument(fmt.Sprintf("sqlquery: %s: %s %s (got %v)", where, op, what, v))
}

func (b *builder) cond(c query.Condition, in *element, where string) (string, error) {
	op := c.Operator
	if op == "" {
		op = query.OpAll
	}
	if !op.IsCore() {
		return "", factum.IllegalArgument(fmt.Sprintf("sqlquery: %s: operator %q is not a core operator; plan the query with a query.Planner first", where, string(op)))
	}
	if c.Field != "" {
		if err := query.ValidatePath(c.Field); err != nil {
			return "", err
		}
	} else if in == nil && op != query.OpAll && op != query.OpAnd && op != query.OpOr && op != query.OpNor {
		return "", bad(where, op, "needs a field", c.Field)
	}
	if !finite(c.Value) {
		return "", bad(where, op, "needs finite numbers", c.Value)
	}
	switch op {
	case query.OpAll:
		return sqlTrue, nil
	case query.OpAnd, query.OpOr:
		return b.logical(op, c.Children, in, where)
	case query.OpNor:
		return b.twoValued(func() (string, error) { return b.logical(op, c.Children, in, where) })
	}
	src := b.t.resolve(c.Field, in)
	switch op {
	case query.OpEq:
		return b.equals(src, c.Value, where, op)
	case query.OpNe:
		eq, err := b.twoValued(func() (string, error) { return b.equals(src, c.Value, where, op) })
		if err != nil {
			return "", err
		}
		return not(eq), nil
	case query.OpGt, query.OpGte, query.OpLt, query.OpLte:
		return b.compare(src, op, c.Value, where)
	case query.OpBetween:
		bounds, ok := c.Value.([]any)
		if !ok || len(bounds) != 2 {
			return "", bad(where, op, "needs two bounds", c.Value)
		}
		return b.between(src, bounds[0], bounds[1], where)
	case query.OpIn:
		return b.in(src, c.Value, where, op)
	case query.OpNotIn:
		in, err := b.twoValued(func() (string, error) { return b.in(src, c.Value, where, op) })
		if err != nil {
			return "", err
		}
		return not(in), nil
	case query.OpAllIn:
		return b.allIn(src, c.Value, where)
	case query.OpElemMatch:
		if len(c.Children) == 0 {
			return "", bad(where, op, "needs at least one child", nil)
		}
		return b.elemMatch(src, c.Children, where)
	case query.OpContains, query.OpStartsWith, query.OpEndsWith:
		s, ok := c.Value.(string)
		if !ok {
			return "", bad(where, op, "needs a string value", c.Value)
		}
		return b.text(src, op, s, c.Options.IgnoreCase), nil
	case query.OpNull:
		return src.nullOrMissing(), nil
	case query.OpNotNull:
		return not(src.nullOrMissing()), nil
	case query.OpTrue:
		return src.isBool(true), nil
	case query.OpFalse:
		return src.isBool(false), nil
	case query.OpExists:
		want := true
		if c.Value != nil {
			v, ok := c.Value.(bool)
			if !ok {
				return "", bad(where, op, "needs a bool value or none", c.Value)
			}
			want = v
		}
		if want {
			return src.present(), nil
		}
		return not(src.present()), nil
	}
	return "", factum.IllegalArgument(fmt.Sprintf("sqlquery: %s: operator %q is not supported", where, string(op)))
}

// finite reports whether v holds no NaN or infinity, which JSON cannot
// hold and SQL would compare differently.
func finite(v any) bool {
	switch x := v.(type) {
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case []any:
		for _, e := range x {
			if !finite(e) {
				return false
			}
		}
	}
	return true
}

func not(sql string) string {
	switch sql {
	case sqlTrue:
		return sqlFalse
	case sqlFalse:
		return sqlTrue
	}
	return "(NOT " + sql + ")"
}

func (b *builder) logical(op query.Operator, children []query.Condition, in *element, where string) (string, error) {
	parts := make([]string, 0, len(children))
	for i, ch := range children {
		s, err := b.cond(ch, in, fmt.Sprintf("%s.children[%d]", where, i))
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	}
	switch {
	case len(parts) == 0 && op == query.OpOr:
		return sqlFalse, nil
	case len(parts) == 0:
		return sqlTrue, nil // AND and NOR of nothing
	}
	joiner := " AND "
	if op != query.OpAnd {
		joiner = " OR "
	}
	sql := parts[0]
	if len(parts) > 1 {
		sql = "(" + strings.Join(parts, joiner) + ")"
	}
	if op == query.OpNor {
		return not(sql), nil
	}
	return sql, nil
}

// coalesce makes a comparison two-valued: NULL (a missing field or a
// value of another type) is false. Where the builder writes bare, NULL
// already counts as false, and the comparison is only parenthesised.
func (b *builder) coalesce(cmp string) string {
	if b.bare {
		return "(" + cmp + ")"
	}
	return "COALESCE(" + cmp + ", FALSE)"
}

// twoValued runs fn with comparisons made two-valued, for a condition
// under a NOT: negated, a NULL would stay NULL and drop the row that the
// condition's falsity must keep.
func (b *builder) twoValued(fn func() (string, error)) (string, error) {
	bare := b.bare
	b.bare = false
	defer func() { b.bare = bare }()
	return fn()
}

func (b *builder) equals(src source, v any, where string, op query.Operator) (string, error) {
	switch x := v.(type) {
	case string:
		if e := src.str(); e != "" {
			return b.coalesce(e + " = " + b.typed(x)), nil
		}
		return sqlFalse, nil
	case float64:
		if e := src.num(); e != "" {
			return b.coalesce(e + " = " + b.typed(x)), nil
		}
		return sqlFalse, nil
	case bool:
		return src.isBool(x), nil
	}
	return "", bad(where, op, "needs a string, number or bool value", v)
}

var comparators = map[query.Operator]string{query.OpGt: ">", query.OpGte: ">=", query.OpLt: "<", query.OpLte: "<="}

func (b *builder) compare(src source, op query.Operator, v any, where string) (string, error) {
	switch x := v.(type) {
	case string:
		if e := src.str(); e != "" {
			return b.coalesce(src.ordered(e) + " " + comparators[op] + " " + b.typed(x)), nil
		}
		return sqlFalse, nil
	case float64:
		if e := src.num(); e != "" {
			return b.coalesce(e + " " + comparators[op] + " " + b.typed(x)), nil
		}
		return sqlFalse, nil
	}
	return "", bad(where, op, "needs a string or number value", v)
}

func (b *builder) between(src source, lo, hi any, where string) (string, error) {
	switch l := lo.(type) {
	case string:
		h, ok := hi.(string)
		if !ok {
			break
		}
		if e := src.str(); e != "" {
			return b.coalesce(src.ordered(e) + " BETWEEN " + b.typed(l) + " AND " + b.typed(h)), nil
		}
		return sqlFalse, nil
	case float64:
		h, ok := hi.(float64)
		if !ok {
			break
		}
		if e := src.num(); e != "" {
			return b.coalesce(e + " BETWEEN " + b.typed(l) + " AND " + b.typed(h)), nil
		}
		return sqlFalse, nil
	}
	return "", bad(where, query.OpBetween, "needs two bounds, both numbers or both strings", []any{lo, hi})
}
