package sqlquery

import (
	"strconv"
	"strings"

	"github.com/factum-go/factum/query"
)

// in is "the field equals one of list", one comparison per JSON type.
func (b *builder) in(src source, list any, where string, op query.Operator) (string, error) {
	vals, ok := list.([]any)
	if !ok || len(vals) == 0 {
		return "", bad(where, op, "needs a non-empty list", list)
	}
	var strs []string
	var nums []float64
	var hasTrue, hasFalse bool
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			strs = append(strs, x)
		case float64:
			nums = append(nums, x)
		case bool:
			hasTrue = hasTrue || x
			hasFalse = hasFalse || !x
		default:
			return "", bad(where, op, "needs a list of strings, numbers or bools", v)
		}
	}
	var parts []string
	if e := src.str(); e != "" && len(strs) > 0 {
		parts = append(parts, b.coalesce(e+inList(b, strs, "text[]")))
	}
	if e := src.num(); e != "" && len(nums) > 0 {
		parts = append(parts, b.coalesce(e+inList(b, nums, "float8[]")))
	}
	if hasTrue {
		if e := src.isBool(true); e != sqlFalse {
			parts = append(parts, e)
		}
	}
	if hasFalse {
		if e := src.isBool(false); e != sqlFalse {
			parts = append(parts, e)
		}
	}
	switch len(parts) {
	case 0:
		return sqlFalse, nil
	case 1:
		return parts[0], nil
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}

// inList writes " IN (?, ?, ...)" (SQLite) or " = ANY($n::type)" with one
// array argument (PostgreSQL).
func inList[T any](b *builder, vals []T, pgType string) string {
	if b.t.dialect.postgres {
		return " = ANY(" + b.arg(vals) + "::" + pgType + ")"
	}
	ph := make([]string, len(vals))
	for i, v := range vals {
		ph[i] = b.arg(v)
	}
	return " IN (" + strings.Join(ph, ", ") + ")"
}

// subquery writes EXISTS over the array's elements with the condition
// cond writes for them.
func (b *builder) subquery(src source, cond func(e element) (string, error)) (string, error) {
	if src.kind != JSON {
		return sqlFalse, nil
	}
	b.depth++
	defer func() { b.depth-- }()
	from, e := src.elements("e" + strconv.Itoa(b.depth))
	where, err := cond(e)
	if err != nil {
		return "", err
	}
	exists := "EXISTS (SELECT 1 FROM " + from + " WHERE " + where + ")"
	if b.t.dialect.postgres {
		return exists, nil // jsonb_array_elements only ever sees arrays
	}
	return "(" + src.isArray() + " AND " + exists + ")", nil
}

func (b *builder) allIn(src source, list any, where string) (string, error) {
	vals, ok := list.([]any)
	if !ok || len(vals) == 0 {
		return "", bad(where, query.OpAllIn, "needs a non-empty list", list)
	}
	parts := make([]string, 0, len(vals))
	for _, v := range vals {
		s, err := b.subquery(src, func(e element) (string, error) {
			return b.equals(elementSource(b.t.dialect, e, nil), v, where, query.OpAllIn)
		})
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return "(" + strings.Join(parts, " AND ") + ")", nil
}

func (b *builder) elemMatch(src source, children []query.Condition, where string) (string, error) {
	return b.subquery(src, func(e element) (string, error) {
		return b.logical(query.OpAnd, children, &e, where)
	})
}
