package query

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// lowerer checks a condition tree against the limits and the operators'
// shapes, and rewrites it to core operators, in one pass.
type lowerer struct {
	limits Limits
	fields Fields
	now    func() time.Time
	loc    *time.Location

	nodes, values int
	at            time.Time // the clock read once, so all dates of one query agree
	// stack holds the child indexes down to the node being lowered; it is
	// only formatted when there is an error to report.
	stack []int
}

// where names the node being lowered, such as "condition.children[2]".
func (l *lowerer) where() string {
	var b strings.Builder
	b.WriteString("condition")
	for _, i := range l.stack {
		fmt.Fprintf(&b, ".children[%d]", i)
	}
	return b.String()
}

func (l *lowerer) clock() time.Time {
	if l.at.IsZero() {
		l.at = l.now()
	}
	return l.at
}

func (l *lowerer) lower(c Condition, inElem bool) (Condition, error) {
	l.nodes++
	if exceeds(l.nodes, l.limits.MaxConditionNodes) {
		return Condition{}, illegal(fmt.Sprintf("condition has more than %d nodes, the maximum", l.limits.MaxConditionNodes))
	}
	op := c.Operator
	if op == "" {
		op = OpAll
	}
	shape, ok := shapes[op]
	if !ok {
		return Condition{}, illegal(fmt.Sprintf("%s: unknown operator %q", l.where(), string(op)))
	}
	v := Normalize(c.Value)
	if list, isList := v.([]any); isList {
		l.values += len(list)
	} else if v != nil {
		l.values++
	}
	if exceeds(l.values, l.limits.MaxConditionValues) {
		return Condition{}, illegal(fmt.Sprintf("condition has more than %d values, the maximum", l.limits.MaxConditionValues))
	}
	bad := func(format string, args ...any) (Condition, error) {
		return Condition{}, illegal(l.where() + ": " + string(op) + " " + fmt.Sprintf(format, args...))
	}

	if op.takesField() {
		if c.Field == "" && !inElem {
			return bad("needs a field")
		}
		if c.Field != "" {
			if msg := pathProblem(c.Field); msg != "" {
				return Condition{}, illegal(l.where() + ": " + msg)
			}
		}
	} else if c.Field != "" {
		return bad("takes no field (got %q)", c.Field)
	}
	if len(c.Children) > 0 && shape != shapeLogical && shape != shapeElem {
		return bad("takes no children")
	}
	if c.Options.IgnoreCase && shape != shapeString {
		return bad("does not take ignoreCase (only CONTAINS, STARTS_WITH and ENDS_WITH do)")
	}
	if c.Options.ZoneID != "" && shape != shapeDate && shape != shapeDays {
		return bad("does not take zoneId (only date-relative operators do)")
	}
	if inElem {
		switch shape {
		case shapeIdentity, shapeIdentities, shapeDeleted:
			return bad("cannot be used inside ELEM_MATCH")
		}
	}
	noValue := func() error {
		if v != nil {
			_, err := bad("takes no value (got %s)", describe(v))
			return err
		}
		return nil
	}
	out := Condition{Field: c.Field, Operator: op, Value: v}

	switch shape {
	case shapeLogical, shapeElem:
		if err := noValue(); err != nil {
			return Condition{}, err
		}
		if shape == shapeElem && len(c.Children) == 0 {
			return bad("needs at least one child condition")
		}
		out.Children = make([]Condition, len(c.Children))
		for i, ch := range c.Children {
			l.stack = append(l.stack, i)
			lc, err := l.lower(ch, inElem || shape == shapeElem)
			if err != nil {
				return Condition{}, err
			}
			l.stack = l.stack[:len(l.stack)-1]
			out.Children[i] = lc
		}
		if op == OpAnd {
			// Flattening nested ANDs and dropping ALLs keeps the SQL short.
			return and(out.Children...), nil
		}
		return out, nil
	case shapeNone:
		if err := noValue(); err != nil {
			return Condition{}, err
		}
		return All(), nil
	case shapeIdentity:
		s, ok := v.(string)
		if !ok || s == "" {
			return bad("needs a non-empty string value (got %s)", describe(v))
		}
		return Condition{Field: l.identityField(op), Operator: OpEq, Value: s}, nil
	case shapeIdentities:
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return bad("needs a non-empty list of strings (got %s)", describe(v))
		}
		for _, e := range list {
			if s, ok := e.(string); !ok || s == "" {
				return bad("needs a list of non-empty strings (got element %s)", describe(e))
			}
		}
		return Condition{Field: l.identityField(op), Operator: OpIn, Value: list}, nil
	case shapeDeleted:
		d, err := parseDeletionState(v)
		if err != nil {
			return bad("value %s: want ACTIVE, DELETED or ALL", describe(v))
		}
		switch d {
		case Active:
			return Condition{Field: l.fields.Deleted, Operator: OpNe, Value: true}, nil
		case DeletedOnly:
			return Condition{Field: l.fields.Deleted, Operator: OpEq, Value: true}, nil
		}
		return All(), nil
	case shapeScalar:
		if !isScalar(v) {
			return bad("needs a string, number or bool value (got %s)", describe(v))
		}
	case shapeOrdered:
		if !isOrdered(v) {
			return bad("needs a string or number value (got %s)", describe(v))
		}
	case shapeRange:
		list, ok := v.([]any)
		if !ok || len(list) != 2 || !isOrdered(list[0]) || !sameKind(list[0], list[1]) {
			return bad("needs two bounds, both numbers or both strings (got %s)", describe(v))
		}
	case shapeList:
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return bad("needs a non-empty list of values (got %s)", describe(v))
		}
		for _, e := range list {
			if !isScalar(e) {
				return bad("needs a list of strings, numbers or bools (got element %s)", describe(e))
			}
		}
	case shapeString:
		if _, ok := v.(string); !ok {
			return bad("needs a string value (got %s)", describe(v))
		}
		out.Options = Options{IgnoreCase: c.Options.IgnoreCase}
	case shapeFlag:
		if err := noValue(); err != nil {
			return Condition{}, err
		}
	case shapeExists:
		switch v.(type) {
		case nil:
			out.Value = true
		case bool:
		default:
			return bad("needs a bool value or none (got %s)", describe(v))
		}
	case shapeDate, shapeDays:
		days := 0
		if shape == shapeDays {
			f, ok := v.(float64)
			if !ok || f != math.Trunc(f) || f < 1 || f > maxDays {
				return bad("needs a whole number of days from 1 to %d (got %s)", maxDays, describe(v))
			}
			days = int(f)
		} else if err := noValue(); err != nil {
			return Condition{}, err
		}
		now := l.clock().In(l.loc)
		if c.Options.ZoneID != "" {
			loc, err := time.LoadLocation(c.Options.ZoneID)
			if err != nil {
				return bad("zoneId %q is not a known time zone", c.Options.ZoneID)
			}
			now = now.In(loc)
		}
		return lowerDate(c, days, now), nil
	}
	return out, nil
}

func (l *lowerer) identityField(op Operator) string {
	switch op {
	case OpID, OpIDs:
		return l.fields.ID
	case OpAggregateID, OpAggregateIDs:
		return l.fields.AggregateID
	case OpTenant:
		return l.fields.Tenant
	}
	return l.fields.Owner
}

// isScalar reports whether v is a condition value EQ and IN take: a
// string, a bool or a finite number (JSON has no NaN or infinity, so no
// backend could store one to compare with).
func isScalar(v any) bool {
	switch x := v.(type) {
	case string, bool:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return false
}

// isOrdered reports whether v is a value GT, LT and BETWEEN take.
func isOrdered(v any) bool {
	_, isBool := v.(bool)
	return !isBool && isScalar(v)
}

func sameKind(a, b any) bool {
	switch a.(type) {
	case string:
		_, ok := b.(string)
		return ok
	case float64:
		_, ok := b.(float64)
		return ok
	}
	return false
}
