package sqlquery

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/factum-go/factum"
)

// Dialect is the SQL flavour a Translator writes. The zero Dialect is not
// usable; take SQLite() or PostgreSQL().
type Dialect struct{ postgres, valid bool }

// SQLite returns the dialect of SQLite with its built-in JSON functions
// (json_type, json_extract, json_each; SQLite 3.38 or later), "?"
// placeholders, and JSON stored as text.
func SQLite() Dialect { return Dialect{valid: true} }

// PostgreSQL returns the dialect of PostgreSQL 12 or later with JSON in
// jsonb columns and "$n" placeholders.
func PostgreSQL() Dialect { return Dialect{postgres: true, valid: true} }

// String names the dialect.
func (d Dialect) String() string {
	if d.postgres {
		return "postgresql"
	}
	return "sqlite"
}

// placeholder returns the SQL text of argument n (1-based).
func (d Dialect) placeholder(n int) string {
	if d.postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// ColumnType is how a column holds its document field.
type ColumnType uint8

// The column types. A SQL NULL in a Text, Number or Bool column is a
// missing field.
const (
	// Text holds a string field.
	Text ColumnType = iota + 1
	// Number holds a number field (INTEGER/REAL in SQLite, any numeric
	// type in PostgreSQL).
	Number
	// Bool holds a bool field (0/1 INTEGER in SQLite, boolean in
	// PostgreSQL).
	Bool
	// JSON holds a JSON value (text in SQLite, jsonb in PostgreSQL); paths
	// below the field go into it.
	JSON
)

// Column maps one top-level document field to a column.
type Column struct {
	// Name is the column name, an identifier of ASCII letters, digits and
	// '_' (not starting with a digit).
	Name string
	// Type is how the column holds the field.
	Type ColumnType
	// NotNull declares that the column is never NULL, so the field is
	// always present; the SQL is then simpler and can use indexes.
	NotNull bool
}

// Schema maps the documents a query sees to a table.
type Schema struct {
	// Alias qualifies every column reference ("t" when empty): the FROM
	// clause must name the table with this alias. It keeps columns apart
	// from the columns of the JSON table functions used for arrays.
	Alias string
	// Fields maps top-level document fields to columns.
	Fields map[string]Column
	// Document, when set, is a JSON column holding the document itself:
	// every field not in Fields is looked up in it. When empty, such
	// fields are always missing.
	Document string
}

// SnapshotColumns returns the columns of a snapshot table in the order the
// SQL snapshot stores read them.
func SnapshotColumns() []string {
	return []string{"aggregate_id", "tenant_id", "owner_id", "version", "event_id", "first_operator",
		"operator", "first_event_time", "event_time", "snapshot_time", "deleted", "state"}
}

// SnapshotSchema returns the schema of a snapshot table with the columns
// aggregate_id, tenant_id, owner_id (text), version, first_event_time,
// event_time, snapshot_time (epoch-millisecond integers), event_id,
// first_operator, operator (text), deleted (bool) and state (JSON), all
// NOT NULL, matching the snapshot query document.
func SnapshotSchema() Schema {
	text := func(name string) Column { return Column{Name: name, Type: Text, NotNull: true} }
	num := func(name string) Column { return Column{Name: name, Type: Number, NotNull: true} }
	return Schema{Fields: map[string]Column{
		"aggregateId":    text("aggregate_id"),
		"tenantId":       text("tenant_id"),
		"ownerId":        text("owner_id"),
		"version":        num("version"),
		"eventId":        text("event_id"),
		"firstOperator":  text("first_operator"),
		"operator":       text("operator"),
		"firstEventTime": num("first_event_time"),
		"eventTime":      num("event_time"),
		"snapshotTime":   num("snapshot_time"),
		"deleted":        {Name: "deleted", Type: Bool, NotNull: true},
		"state":          {Name: "state", Type: JSON, NotNull: true},
	}}
}

// validIdent reports whether s is a plain SQL identifier.
func validIdent(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func (s Schema) validate() error {
	if s.Alias != "" && !validIdent(s.Alias) {
		return factum.IllegalArgument(fmt.Sprintf("sqlquery: alias %q is not a plain identifier", s.Alias))
	}
	if s.Document != "" && !validIdent(s.Document) {
		return factum.IllegalArgument(fmt.Sprintf("sqlquery: document column %q is not a plain identifier", s.Document))
	}
	fields := make([]string, 0, len(s.Fields))
	for f := range s.Fields {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		c := s.Fields[f]
		if !validIdent(f) {
			return factum.IllegalArgument(fmt.Sprintf("sqlquery: field %q: a column maps a top-level field name", f))
		}
		if !validIdent(c.Name) {
			return factum.IllegalArgument(fmt.Sprintf("sqlquery: field %q: column %q is not a plain identifier", f, c.Name))
		}
		if c.Type < Text || c.Type > JSON {
			return factum.IllegalArgument(fmt.Sprintf("sqlquery: field %q: unknown column type %d", f, c.Type))
		}
	}
	if len(s.Fields) == 0 && s.Document == "" {
		return factum.IllegalArgument("sqlquery: the schema maps no field and has no document column")
	}
	return nil
}
