package query

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
)

// Condition is one node of a condition tree: an operator applied to a field
// path and a value, or to child conditions. Build conditions with the
// constructors (Eq, And, Today, ...), which normalise values, or decode them
// from JSON. The zero Condition matches every document.
//
// A condition is plain data: it is checked when a Planner plans a query
// with it, not when it is built, so a constructor never fails.
type Condition struct {
	// Field is the dotted field path the operator applies to, such as
	// "state.address.city". Logical, identity and deletion operators take
	// none.
	Field string `json:"field,omitempty"`
	// Operator is what the condition tests.
	Operator Operator `json:"operator"`
	// Value is the operand: nil, a bool, a float64, a string, or a []any of
	// those scalars. Constructors convert other Go numbers, time.Time
	// (epoch milliseconds) and slices to these types.
	Value any `json:"value,omitzero"`
	// Children are the operands of AND, OR, NOR and ELEM_MATCH.
	Children []Condition `json:"children,omitempty"`
	// Options modify the operator.
	Options Options `json:"options,omitzero"`
}

// Options modify how an operator matches.
type Options struct {
	// IgnoreCase makes CONTAINS, STARTS_WITH and ENDS_WITH fold ASCII
	// letters (A-Z to a-z) on both sides before comparing. Only ASCII is
	// folded so that every backend folds identically.
	IgnoreCase bool `json:"ignoreCase,omitempty"`
	// ZoneID is the IANA time zone (such as "Asia/Shanghai" or "UTC") in
	// which a date-relative operator finds its day, week and month
	// boundaries, instead of the Planner's location.
	ZoneID string `json:"zoneId,omitempty"`
}

// All returns the condition that matches every document.
func All() Condition { return Condition{Operator: OpAll} }

// And returns the condition that matches when every one of cs matches.
func And(cs ...Condition) Condition { return Condition{Operator: OpAnd, Children: cs} }

// Or returns the condition that matches when at least one of cs matches.
func Or(cs ...Condition) Condition { return Condition{Operator: OpOr, Children: cs} }

// Nor returns the condition that matches when none of cs matches.
func Nor(cs ...Condition) Condition { return Condition{Operator: OpNor, Children: cs} }

// Not returns the condition that matches exactly when c does not.
func Not(c Condition) Condition { return Nor(c) }

// ID returns the condition matching the document with the given ID.
func ID(id string) Condition { return Condition{Operator: OpID, Value: id} }

// IDs returns the condition matching the documents with any of the IDs.
func IDs(ids ...string) Condition { return Condition{Operator: OpIDs, Value: stringList(ids)} }

// AggregateID returns the condition matching the aggregate with the ID.
func AggregateID(id string) Condition { return Condition{Operator: OpAggregateID, Value: id} }

// AggregateIDs returns the condition matching the aggregates with any of
// the IDs.
func AggregateIDs(ids ...string) Condition {
	return Condition{Operator: OpAggregateIDs, Value: stringList(ids)}
}

// Tenant returns the condition matching the documents of the tenant.
func Tenant(tenant string) Condition { return Condition{Operator: OpTenant, Value: tenant} }

// Owner returns the condition matching the documents of the owner.
func Owner(owner string) Condition { return Condition{Operator: OpOwner, Value: owner} }

// Deleted returns the condition selecting documents by deletion state.
func Deleted(state DeletionState) Condition {
	return Condition{Operator: OpDeleted, Value: string(state)}
}

func field(op Operator, path string, v any) Condition {
	return Condition{Field: path, Operator: op, Value: Normalize(v)}
}

// Eq returns the condition "field equals v".
func Eq(path string, v any) Condition { return field(OpEq, path, v) }

// Ne returns the condition "field does not equal v" (true when missing).
func Ne(path string, v any) Condition { return field(OpNe, path, v) }

// Gt returns the condition "field > v".
func Gt(path string, v any) Condition { return field(OpGt, path, v) }

// Gte returns the condition "field >= v".
func Gte(path string, v any) Condition { return field(OpGte, path, v) }

// Lt returns the condition "field < v".
func Lt(path string, v any) Condition { return field(OpLt, path, v) }

// Lte returns the condition "field <= v".
func Lte(path string, v any) Condition { return field(OpLte, path, v) }

// Between returns the condition "lo <= field <= hi".
func Between(path string, lo, hi any) Condition {
	return Condition{Field: path, Operator: OpBetween, Value: []any{Normalize(lo), Normalize(hi)}}
}

// list normalises the values of a list operator. A single slice argument is
// taken as the list itself, so In("f", []string{"a", "b"}) works.
func list(vs []any) any {
	if len(vs) == 1 {
		if rv := reflect.ValueOf(vs[0]); rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() != reflect.Uint8 {
			return Normalize(vs[0])
		}
	}
	return Normalize(vs)
}

// In returns the condition "field equals one of vs".
func In(path string, vs ...any) Condition {
	return Condition{Field: path, Operator: OpIn, Value: list(vs)}
}

// NotIn returns the condition "field equals none of vs" (true when missing).
func NotIn(path string, vs ...any) Condition {
	return Condition{Field: path, Operator: OpNotIn, Value: list(vs)}
}

// AllIn returns the condition "field is an array holding every one of vs".
func AllIn(path string, vs ...any) Condition {
	return Condition{Field: path, Operator: OpAllIn, Value: list(vs)}
}

// ElemMatch returns the condition "field is an array with an element
// matching every one of cs". Paths in cs are relative to the element; the
// empty path is the element itself.
func ElemMatch(path string, cs ...Condition) Condition {
	return Condition{Field: path, Operator: OpElemMatch, Children: cs}
}

// Contains returns the condition "field is a string containing s".
func Contains(path, s string) Condition { return field(OpContains, path, s) }

// StartsWith returns the condition "field is a string starting with s".
func StartsWith(path, s string) Condition { return field(OpStartsWith, path, s) }

// EndsWith returns the condition "field is a string ending with s".
func EndsWith(path, s string) Condition { return field(OpEndsWith, path, s) }

// IgnoreCase returns c with ASCII case folding on (for CONTAINS,
// STARTS_WITH and ENDS_WITH).
func (c Condition) IgnoreCase() Condition {
	c.Options.IgnoreCase = true
	return c
}

// InZone returns c with its date boundaries found in the IANA zone.
func (c Condition) InZone(zoneID string) Condition {
	c.Options.ZoneID = zoneID
	return c
}

// Null returns the condition "field is missing or null".
func Null(path string) Condition { return Condition{Field: path, Operator: OpNull} }

// NotNull returns the condition "field is present and not null".
func NotNull(path string) Condition { return Condition{Field: path, Operator: OpNotNull} }

// True returns the condition "field is true".
func True(path string) Condition { return Condition{Field: path, Operator: OpTrue} }

// False returns the condition "field is false".
func False(path string) Condition { return Condition{Field: path, Operator: OpFalse} }

// Exists returns the condition "field is present" (or, with exists false,
// "field is missing").
func Exists(path string, exists bool) Condition {
	return Condition{Field: path, Operator: OpExists, Value: exists}
}

func date(op Operator, path string) Condition { return Condition{Field: path, Operator: op} }

// Today returns the condition "field is a time in the current day".
func Today(path string) Condition { return date(OpToday, path) }

// Yesterday returns the condition "field is a time in the previous day".
func Yesterday(path string) Condition { return date(OpYesterday, path) }

// Tomorrow returns the condition "field is a time in the next day".
func Tomorrow(path string) Condition { return date(OpTomorrow, path) }

// BeforeToday returns the condition "field is a time before today".
func BeforeToday(path string) Condition { return date(OpBeforeToday, path) }

// ThisWeek returns the condition "field is a time in the current week".
func ThisWeek(path string) Condition { return date(OpThisWeek, path) }

// NextWeek returns the condition "field is a time in the next week".
func NextWeek(path string) Condition { return date(OpNextWeek, path) }

// LastWeek returns the condition "field is a time in the previous week".
func LastWeek(path string) Condition { return date(OpLastWeek, path) }

// ThisMonth returns the condition "field is a time in the current month".
func ThisMonth(path string) Condition { return date(OpThisMonth, path) }

// LastMonth returns the condition "field is a time in the previous month".
func LastMonth(path string) Condition { return date(OpLastMonth, path) }

// RecentDays returns the condition "field is a time in the last n days,
// today included".
func RecentDays(path string, n int) Condition {
	return Condition{Field: path, Operator: OpRecentDays, Value: Normalize(n)}
}

// EarlierDays returns the condition "field is a time before the last n
// days".
func EarlierDays(path string, n int) Condition {
	return Condition{Field: path, Operator: OpEarlierDays, Value: Normalize(n)}
}

func stringList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// maxExactInt is the largest integer a float64 holds exactly (2^53):
// numbers are compared as float64 everywhere, so larger integers are
// refused rather than silently rounded.
const maxExactInt = 1 << 53

// Normalize converts a Go value to the form conditions hold: nil, bool,
// float64, string, or []any of those. Integers and floats of every size
// become float64, json.Number is parsed, time.Time becomes epoch
// milliseconds, and slices become []any. A value it cannot convert (a map,
// a struct, an integer beyond ±2^53, NaN) is returned unchanged, and
// planning the condition then refuses it with an IllegalArgument error.
func Normalize(v any) any {
	if n, ok := normalizeScalar(v); ok {
		return n
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.Type().Elem().Kind() == reflect.Uint8 {
		return v
	}
	out := make([]any, rv.Len())
	for i := range out {
		e := rv.Index(i).Interface()
		n, ok := normalizeScalar(e)
		if !ok {
			return v
		}
		out[i] = n
	}
	return out
}

func normalizeScalar(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return normalizeScalar(float64(x))
	case int:
		return intValue(int64(x))
	case int8:
		return intValue(int64(x))
	case int16:
		return intValue(int64(x))
	case int32:
		return intValue(int64(x))
	case int64:
		return intValue(x)
	case uint:
		return uintValue(uint64(x))
	case uint8:
		return uintValue(uint64(x))
	case uint16:
		return uintValue(uint64(x))
	case uint32:
		return uintValue(uint64(x))
	case uint64:
		return uintValue(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			if _, ok := intValue(i); !ok {
				return v, false
			}
			return float64(i), true
		}
		if !strings.ContainsAny(string(x), ".eE") {
			return v, false // an integer too large for int64, let alone float64
		}
		f, err := x.Float64()
		if err != nil {
			return v, false
		}
		return normalizeScalar(f)
	case time.Time:
		return float64(x.UnixMilli()), true
	}
	return v, false
}

func intValue(i int64) (any, bool) {
	if i > maxExactInt || i < -maxExactInt {
		return i, false
	}
	return float64(i), true
}

func uintValue(u uint64) (any, bool) {
	if u > maxExactInt {
		return u, false
	}
	return float64(u), true
}

// describe formats a value for an error message, bounded in length.
func describe(v any) string {
	s := fmt.Sprintf("%#v", v)
	if b, err := json.Marshal(v); err == nil {
		s = string(b)
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
