package sqlquery

import (
	"strings"

	"github.com/factum-go/factum/query"
)

// A source is where a field path's value comes from: nowhere (the field
// is always missing), a typed scalar column, or a place in a JSON value.
// Its methods write the SQL that classifies and extracts that value; each
// returns an expression that is never SQL NULL, or, for the typed
// extractions, one that is NULL exactly when the value is not of that
// type ("" when it can never be).
type source struct {
	d    Dialect
	kind ColumnType // 0: missing
	col  string     // qualified scalar column

	notNull bool

	// JSON places. SQLite: json_type(doc, path) with path an SQL string
	// expression. PostgreSQL: expr, a jsonb expression.
	doc, path string
	expr      string
}

const (
	sqlTrue  = "TRUE"
	sqlFalse = "FALSE"
)

// quoteKey writes an object key for a JSON path. Keys are validated path
// segments (ASCII letters, digits, '_'), so quoting them needs no
// escaping; quoting keeps digit keys object keys, never array indexes.
func sqliteKey(key string) string { return `."` + key + `"` }

// postgresPath returns the PostgreSQL expression of the path segs inside
// the jsonb expression base: a chain of -> steps, each key a literal.
func postgresPath(base string, segs []string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, k := range segs {
		b.WriteString(" -> '")
		b.WriteString(k)
		b.WriteString("'")
	}
	return b.String()
}

// jsonSource returns the source of the path segs inside a JSON column.
func jsonSource(d Dialect, col string, segs []string) source {
	s := source{d: d, kind: JSON}
	if d.postgres {
		s.expr = postgresPath(col, segs)
		return s
	}
	var b strings.Builder
	b.WriteString("'$")
	for _, k := range segs {
		b.WriteString(sqliteKey(k))
	}
	b.WriteString("'")
	s.doc, s.path = col, b.String()
	return s
}

// element is the context of an ELEM_MATCH or ALL_IN subquery: the alias
// of the row set of array elements, and the array's document (SQLite).
type element struct {
	alias string
	doc   string
}

// elementSource returns the source of segs relative to an array element.
func elementSource(d Dialect, e element, segs []string) source {
	s := source{d: d, kind: JSON}
	if d.postgres {
		s.expr = postgresPath(e.alias+".v", segs)
		return s
	}
	// json_each's fullkey is the element's path from the document root.
	s.doc, s.path = e.doc, e.alias+".fullkey"
	if len(segs) > 0 {
		var b strings.Builder
		b.WriteString("'")
		for _, k := range segs {
			b.WriteString(sqliteKey(k))
		}
		b.WriteString("'")
		s.path = "(" + s.path + " || " + b.String() + ")"
	}
	return s
}

// resolve maps a field path to its source.
func (t *Translator) resolve(path string, in *element) source {
	segs := query.SplitPath(path)
	if in != nil {
		return elementSource(t.dialect, *in, segs)
	}
	if c, ok := t.schema.Fields[segs[0]]; ok {
		col := t.alias + "." + c.Name
		if c.Type == JSON {
			return jsonSource(t.dialect, col, segs[1:])
		}
		if len(segs) > 1 {
			return source{d: t.dialect} // a path below a scalar is missing
		}
		return source{d: t.dialect, kind: c.Type, col: col, notNull: c.NotNull}
	}
	if t.schema.Document != "" {
		return jsonSource(t.dialect, t.alias+"."+t.schema.Document, segs)
	}
	return source{d: t.dialect}
}

func (s source) typeOf() string {
	if s.d.postgres {
		return "jsonb_typeof(" + s.expr + ")"
	}
	return "json_type(" + s.doc + ", " + s.path + ")"
}

// present is "the field exists" (JSON null included).
func (s source) present() string {
	switch s.kind {
	case 0:
		return sqlFalse
	case JSON:
		if s.d.postgres {
			return "(" + s.expr + " IS NOT NULL)"
		}
		return "(" + s.typeOf() + " IS NOT NULL)"
	}
	if s.notNull {
		return sqlTrue
	}
	return "(" + s.col + " IS NOT NULL)"
}

// nullOrMissing is "the field is missing or JSON null".
func (s source) nullOrMissing() string {
	switch s.kind {
	case 0:
		return sqlTrue
	case JSON:
		return "(COALESCE(" + s.typeOf() + ", 'null') = 'null')"
	}
	if s.notNull {
		return sqlFalse
	}
	return "(" + s.col + " IS NULL)"
}

// isBool is "the field is the JSON bool want".
func (s source) isBool(want bool) string {
	lit := "false"
	if want {
		lit = "true"
	}
	switch s.kind {
	case JSON:
		if s.d.postgres {
			return "COALESCE(" + s.expr + " = '" + lit + "'::jsonb, FALSE)"
		}
		return "(" + s.typeOf() + " IS '" + lit + "')"
	case Bool:
		if s.d.postgres {
			return "(" + s.col + " IS " + strings.ToUpper(lit) + ")"
		}
		if want {
			return "(" + s.col + " IS 1)"
		}
		return "(" + s.col + " IS 0)"
	}
	return sqlFalse
}

// str is the field's value when it is a string, else NULL; "" when it
// never is one.
func (s source) str() string {
	switch s.kind {
	case Text:
		return s.col
	case JSON:
		return s.jsonWhen(" = 'string'", s.expr+" #>> '{}'", " = 'text'")
	}
	return ""
}

// num is the field's value when it is a number, else NULL; "" when it
// never is one. PostgreSQL compares numbers as float8, like Go.
func (s source) num() string {
	switch s.kind {
	case Number:
		if s.d.postgres {
			return "(" + s.col + ")::float8"
		}
		return s.col
	case JSON:
		return s.jsonWhen(" = 'number'", "("+s.expr+")::float8", " IN ('integer', 'real')")
	}
	return ""
}

// jsonWhen is a JSON field's value when its type (typeOf) passes the
// test, else NULL: pgTest and pgValue are PostgreSQL's test and value,
// sqliteTest SQLite's, whose value is json_extract's.
func (s source) jsonWhen(pgTest, pgValue, sqliteTest string) string {
	if s.d.postgres {
		return "(CASE WHEN " + s.typeOf() + pgTest + " THEN " + pgValue + " END)"
	}
	return "(CASE WHEN " + s.typeOf() + sqliteTest + " THEN json_extract(" + s.doc + ", " + s.path + ") END)"
}

// sortNum is num for sorting: a number column sorts as it is, which keeps
// its index usable.
func (s source) sortNum() string {
	if s.kind == Number {
		return s.col
	}
	return s.num()
}

// ordered returns a string expression in byte order (PostgreSQL needs the
// C collation; SQLite's default BINARY collation already is).
func (s source) ordered(str string) string {
	if s.d.postgres {
		return str + ` COLLATE "C"`
	}
	return str
}

// isArray is "the field is an array".
func (s source) isArray() string {
	if s.kind != JSON {
		return sqlFalse
	}
	if s.d.postgres {
		return "COALESCE(" + s.typeOf() + " = 'array', FALSE)"
	}
	return "(" + s.typeOf() + " IS 'array')"
}

// elements returns the FROM item listing the array's elements as alias,
// and the element context for conditions on them. Only JSON sources have
// elements; for an object or scalar the caller also requires isArray
// (SQLite's json_each walks objects and scalars too).
func (s source) elements(alias string) (string, element) {
	if s.d.postgres {
		return "jsonb_array_elements(CASE WHEN " + s.typeOf() + " = 'array' THEN " + s.expr + " END) AS " + alias + "(v)",
			element{alias: alias}
	}
	return "json_each(" + s.doc + ", " + s.path + ") AS " + alias, element{alias: alias, doc: s.doc}
}

// rank is the field's place in the sort order of JSON types (see
// query.Rank), or "" when it is the same for every row.
func (s source) rank() string {
	switch s.kind {
	case 0:
		return ""
	case JSON:
		if s.d.postgres {
			return "(CASE " + s.typeOf() + " WHEN 'null' THEN 1 WHEN 'boolean' THEN (CASE WHEN " + s.expr +
				" = 'true'::jsonb THEN 3 ELSE 2 END) WHEN 'number' THEN 4 WHEN 'string' THEN 5 WHEN 'array' THEN 6 WHEN 'object' THEN 6 ELSE 0 END)"
		}
		return "(CASE " + s.typeOf() + " WHEN 'null' THEN 1 WHEN 'false' THEN 2 WHEN 'true' THEN 3 WHEN 'integer' THEN 4 WHEN 'real' THEN 4" +
			" WHEN 'text' THEN 5 WHEN 'array' THEN 6 WHEN 'object' THEN 6 ELSE 0 END)"
	case Bool:
		r := "(CASE WHEN " + s.isBool(true) + " THEN 3 ELSE 2 END)"
		if s.notNull {
			return r
		}
		return "(CASE WHEN " + s.col + " IS NULL THEN 0 ELSE " + r + " END)"
	}
	if s.notNull {
		return ""
	}
	return "(CASE WHEN " + s.col + " IS NULL THEN 0 ELSE 1 END)"
}
