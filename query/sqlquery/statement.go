package sqlquery

import (
	"fmt"
	"strings"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// Statement is SQL text with its arguments in placeholder order.
type Statement struct {
	// SQL is the statement text.
	SQL string
	// Args are the bound arguments.
	Args []any
}

// Find returns the SELECT of a plan's page:
//
//	SELECT <columns> FROM <table> AS <alias>
//	WHERE <scope> AND <condition> ORDER BY <sort> LIMIT <limit> OFFSET <offset>
//
// scope is an optional condition of the caller (such as the aggregate
// type), written with its own placeholders numbered from 1 and its own
// arguments; the plan's arguments follow. columns are plain identifiers;
// table is a plain or schema-qualified identifier, or one identifier in
// double quotes (for names with other characters). The projection is not applied: the caller reads whole
// documents and applies plan.Projection, so every backend projects alike.
func (t *Translator) Find(plan query.Plan, table string, columns []string, scope Statement) (Statement, error) {
	if plan.Offset < 0 || plan.Limit < 0 {
		return Statement{}, factum.IllegalArgument(fmt.Sprintf("sqlquery: plan window offset %d limit %d is negative", plan.Offset, plan.Limit))
	}
	if len(columns) == 0 {
		return Statement{}, factum.IllegalArgument("sqlquery: no columns to select")
	}
	cols := make([]string, len(columns))
	for i, c := range columns {
		if !validIdent(c) {
			return Statement{}, factum.IllegalArgument(fmt.Sprintf("sqlquery: column %q is not a plain identifier", c))
		}
		cols[i] = t.alias + "." + c
	}
	st, err := t.filtered("SELECT "+strings.Join(cols, ", "), table, plan.Condition, scope)
	if err != nil {
		return Statement{}, err
	}
	order, err := t.OrderBy(plan.Sort)
	if err != nil {
		return Statement{}, err
	}
	var b strings.Builder
	b.WriteString(st.SQL)
	if order != "" {
		b.WriteString(" ORDER BY ")
		b.WriteString(order)
	}
	st.Args = append(st.Args, int64(plan.Limit), int64(plan.Offset))
	n := len(st.Args)
	fmt.Fprintf(&b, " LIMIT %s OFFSET %s", t.dialect.placeholder(n-1), t.dialect.placeholder(n))
	st.SQL = b.String()
	return st, nil
}

// Count returns the SELECT count(*) of a core condition, with an optional
// scope as in Find.
func (t *Translator) Count(cond query.Condition, table string, scope Statement) (Statement, error) {
	return t.filtered("SELECT count(*)", table, cond, scope)
}

func (t *Translator) filtered(head, table string, cond query.Condition, scope Statement) (Statement, error) {
	if !validTable(table) {
		return Statement{}, factum.IllegalArgument(fmt.Sprintf("sqlquery: table %q is not a plain or schema-qualified identifier", table))
	}
	where, args, err := t.where(cond, len(scope.Args), true)
	if err != nil {
		return Statement{}, err
	}
	sql := head + " FROM " + table + " AS " + t.alias + " WHERE "
	if scope.SQL != "" {
		sql += "(" + scope.SQL + ") AND "
	}
	sql += where
	return Statement{SQL: sql, Args: append(append([]any{}, scope.Args...), args...)}, nil
}

func validTable(s string) bool {
	if len(s) >= 3 && s[0] == '"' && s[len(s)-1] == '"' {
		// One quoted identifier: nothing in it can end the quotes.
		inner := s[1 : len(s)-1]
		return len(inner) <= 63 && !strings.ContainsAny(inner, "\"\x00")
	}
	schema, table, qualified := strings.Cut(s, ".")
	if qualified {
		return validIdent(schema) && validIdent(table)
	}
	return validIdent(s)
}
