package query

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Matcher is a compiled core condition: it tests documents in memory with
// exactly the semantics the package documentation defines. A Matcher is
// immutable and safe for concurrent use.
type Matcher struct {
	fn func(root any) bool
}

// Compile compiles a core condition, normally a Plan's. It refuses
// operators that a Planner lowers (identities, deletion, dates) and
// malformed values with an IllegalArgument error; it applies no limits.
func Compile(c Condition) (*Matcher, error) {
	fn, err := compile(c, "condition")
	if err != nil {
		return nil, err
	}
	return &Matcher{fn: fn}, nil
}

// Match reports whether doc satisfies the condition.
func (m *Matcher) Match(doc Document) bool { return m.fn(map[string]any(doc)) }

type pred = func(root any) bool

// getter returns a function that finds the value at path under a root.
func getter(path string) func(any) (any, bool) {
	segs := SplitPath(path)
	switch len(segs) {
	case 0:
		return func(v any) (any, bool) { return v, true }
	case 1:
		key := segs[0]
		return func(v any) (any, bool) {
			m, ok := v.(map[string]any)
			if !ok {
				return lookup(v, segs)
			}
			x, ok := m[key]
			return x, ok
		}
	}
	return func(v any) (any, bool) { return lookup(v, segs) }
}

func compile(c Condition, where string) (pred, error) {
	op := c.Operator
	if op == "" {
		op = OpAll
	}
	if !op.IsCore() {
		return nil, illegal(fmt.Sprintf("%s: operator %q is not a core operator; plan the query with a Planner first", where, string(op)))
	}
	bad := func(what string) error {
		return illegal(fmt.Sprintf("%s: %s %s (got %s)", where, op, what, describe(c.Value)))
	}
	if c.Field != "" {
		if err := checkPath(where, c.Field); err != nil {
			return nil, err
		}
	}
	get := getter(c.Field)

	switch op {
	case OpAll:
		return func(any) bool { return true }, nil
	case OpAnd, OpOr, OpNor:
		kids := make([]pred, len(c.Children))
		for i, ch := range c.Children {
			k, err := compile(ch, fmt.Sprintf("%s.children[%d]", where, i))
			if err != nil {
				return nil, err
			}
			kids[i] = k
		}
		return logical(op, kids), nil
	case OpElemMatch:
		if len(c.Children) == 0 {
			return nil, bad("needs at least one child")
		}
		inner, err := compile(And(c.Children...), where)
		if err != nil {
			return nil, err
		}
		return func(root any) bool {
			v, _ := get(root)
			arr, ok := v.([]any)
			if !ok {
				return false
			}
			for _, e := range arr {
				if inner(e) {
					return true
				}
			}
			return false
		}, nil
	case OpEq, OpNe:
		eq := equals(c.Value)
		if eq == nil {
			return nil, bad("needs a string, number or bool value")
		}
		if op == OpNe {
			return func(root any) bool { v, ok := get(root); return !ok || !eq(v) }, nil
		}
		return func(root any) bool { v, ok := get(root); return ok && eq(v) }, nil
	case OpGt, OpGte, OpLt, OpLte:
		cmp := ordered(op, c.Value)
		if cmp == nil {
			return nil, bad("needs a string or number value")
		}
		return func(root any) bool { v, ok := get(root); return ok && cmp(v) }, nil
	case OpBetween:
		b, ok := c.Value.([]any)
		if !ok || len(b) != 2 || !sameKind(b[0], b[1]) {
			return nil, bad("needs two bounds, both numbers or both strings")
		}
		lo, hi := ordered(OpGte, b[0]), ordered(OpLte, b[1])
		return func(root any) bool { v, ok := get(root); return ok && lo(v) && hi(v) }, nil
	case OpIn, OpNotIn:
		in := setOf(c.Value)
		if in == nil {
			return nil, bad("needs a non-empty list of strings, numbers or bools")
		}
		if op == OpNotIn {
			return func(root any) bool { v, ok := get(root); return !ok || !in(v) }, nil
		}
		return func(root any) bool { v, ok := get(root); return ok && in(v) }, nil
	case OpAllIn:
		list, ok := c.Value.([]any)
		if !ok || len(list) == 0 {
			return nil, bad("needs a non-empty list of strings, numbers or bools")
		}
		eqs := make([]func(any) bool, len(list))
		for i, e := range list {
			if eqs[i] = equals(e); eqs[i] == nil {
				return nil, bad("needs a list of strings, numbers or bools")
			}
		}
		return func(root any) bool {
			v, _ := get(root)
			arr, ok := v.([]any)
			if !ok {
				return false
			}
		next:
			for _, eq := range eqs {
				for _, e := range arr {
					if eq(e) {
						continue next
					}
				}
				return false
			}
			return true
		}, nil
	case OpContains, OpStartsWith, OpEndsWith:
		s, ok := c.Value.(string)
		if !ok {
			return nil, bad("needs a string value")
		}
		test := stringTest(op, s, c.Options.IgnoreCase)
		return func(root any) bool {
			v, _ := get(root)
			str, ok := v.(string)
			return ok && test(str)
		}, nil
	case OpNull:
		return func(root any) bool { v, ok := get(root); return !ok || v == nil }, nil
	case OpNotNull:
		return func(root any) bool { v, ok := get(root); return ok && v != nil }, nil
	case OpTrue, OpFalse:
		want := op == OpTrue
		return func(root any) bool { v, _ := get(root); b, ok := v.(bool); return ok && b == want }, nil
	case OpExists:
		want := true
		if c.Value != nil {
			b, ok := c.Value.(bool)
			if !ok {
				return nil, bad("needs a bool value or none")
			}
			want = b
		}
		return func(root any) bool { _, ok := get(root); return ok == want }, nil
	}
	return nil, illegal(fmt.Sprintf("%s: operator %q is not supported", where, string(op)))
}

func logical(op Operator, kids []pred) pred {
	switch op {
	case OpAnd:
		return func(root any) bool {
			for _, k := range kids {
				if !k(root) {
					return false
				}
			}
			return true
		}
	case OpOr:
		return func(root any) bool {
			for _, k := range kids {
				if k(root) {
					return true
				}
			}
			return false
		}
	}
	return func(root any) bool {
		for _, k := range kids {
			if k(root) {
				return false
			}
		}
		return true
	}
}

// number returns v as a float64 if it is a JSON number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x)
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case float32:
		return float64(x), !math.IsNaN(float64(x))
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint:
		return float64(x), true
	case int16:
		return float64(x), true
	case int8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint8:
		return float64(x), true
	}
	return 0, false
}

// equals returns the test "value equals want" under the type semantics:
// same JSON type and equal value. It returns nil for a non-scalar want.
func equals(want any) func(any) bool {
	switch w := want.(type) {
	case string:
		return func(v any) bool { s, ok := v.(string); return ok && s == w }
	case float64:
		return func(v any) bool { f, ok := number(v); return ok && f == w }
	case bool:
		return func(v any) bool { b, ok := v.(bool); return ok && b == w }
	}
	return nil
}

// ordered returns the test "value op bound" for a number or string bound;
// a value of another type never passes. It returns nil for another bound.
func ordered(op Operator, bound any) func(any) bool {
	test := func(c int) bool {
		switch op {
		case OpGt:
			return c > 0
		case OpGte:
			return c >= 0
		case OpLt:
			return c < 0
		}
		return c <= 0
	}
	switch b := bound.(type) {
	case string:
		return func(v any) bool { s, ok := v.(string); return ok && test(strings.Compare(s, b)) }
	case float64:
		return func(v any) bool {
			f, ok := number(v)
			if !ok {
				return false
			}
			switch {
			case f < b:
				return test(-1)
			case f > b:
				return test(1)
			}
			return test(0)
		}
	}
	return nil
}

// setOf returns the test "value equals one of list".
func setOf(list any) func(any) bool {
	l, ok := list.([]any)
	if !ok || len(l) == 0 {
		return nil
	}
	strs := map[string]struct{}{}
	nums := map[float64]struct{}{}
	var hasTrue, hasFalse bool
	for _, e := range l {
		switch x := e.(type) {
		case string:
			strs[x] = struct{}{}
		case float64:
			nums[x] = struct{}{}
		case bool:
			hasTrue = hasTrue || x
			hasFalse = hasFalse || !x
		default:
			return nil
		}
	}
	return func(v any) bool {
		switch x := v.(type) {
		case string:
			_, ok := strs[x]
			return ok
		case bool:
			return x && hasTrue || !x && hasFalse
		}
		if f, ok := number(v); ok {
			_, ok := nums[f]
			return ok
		}
		return false
	}
}

func stringTest(op Operator, want string, ignoreCase bool) func(string) bool {
	if ignoreCase {
		want = foldASCII(want)
	}
	var test func(s, sub string) bool
	switch op {
	case OpContains:
		test = strings.Contains
	case OpStartsWith:
		test = strings.HasPrefix
	default:
		test = strings.HasSuffix
	}
	if ignoreCase {
		return func(s string) bool { return test(foldASCII(s), want) }
	}
	return func(s string) bool { return test(s, want) }
}

// foldASCII lowers ASCII letters only, allocating only when s has one.
func foldASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + ('a' - 'A')
				}
			}
			return string(b)
		}
	}
	return s
}
