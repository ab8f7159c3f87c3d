package projection

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/factum-go/factum"
)

// ParamType is the type of a query parameter; a request's text value is
// parsed as it, or the query is refused with IllegalArgument.
type ParamType int

// The parameter types.
const (
	// String is any text up to MaxParamLen bytes.
	String ParamType = iota + 1
	// Int is a signed 64-bit integer in decimal.
	Int
	// Bool is true or false (strconv.ParseBool).
	Bool
	// Time is an RFC 3339 time.
	Time
)

func (t ParamType) String() string {
	switch t {
	case String:
		return "string"
	case Int:
		return "integer"
	case Bool:
		return "boolean"
	case Time:
		return "time"
	}
	return "ParamType(" + strconv.Itoa(int(t)) + ")"
}

// MaxParamLen bounds a String parameter's value.
const MaxParamLen = 1024

// DefaultMaxRows is a query's row limit when MaxRows does not set one.
const DefaultMaxRows = 100

// LimitParam is the reserved parameter a request lowers a query's row
// limit with (1 to the query's MaxRows).
const LimitParam = "limit"

// QueryOption configures a read query.
type QueryOption func(*QuerySpec)

// Param declares a query parameter: its name (a letter, then letters,
// digits and '_'; not LimitParam), its type, and whether it is required.
func Param(name string, typ ParamType, required bool) QueryOption {
	return func(q *QuerySpec) { q.params = append(q.params, ParamSpec{Name: name, Type: typ, Required: required}) }
}

// MaxRows sets the most rows the query returns (default DefaultMaxRows);
// a result with more is cut there and marked Truncated.
func MaxRows(n int) QueryOption { return func(q *QuerySpec) { q.maxRows = n } }

// Describe sets the query's description, for the OpenAPI document.
func Describe(text string) QueryOption { return func(q *QuerySpec) { q.doc = text } }

// QueryFunc builds a read query's SQL and arguments from its validated
// parameters. It reaches the projection's tables only through
// scope.From, which reads the live build's rows of the caller's tenant and
// no other: a query cannot forget the tenant, and a parameter cannot widen
// it. Its SQL is the database's own ($1… placeholders for args).
type QueryFunc func(scope Scope, args Args) (query string, queryArgs []any, err error)

// Query declares a named read query over the live build's tables, run in
// the caller's tenant (Runner.Query, and over HTTP GET
// /{context}/projection/{name}/{query}?param=…).
func Query(name string, fn QueryFunc, opts ...QueryOption) Option {
	return func(p *Projection) {
		q := &QuerySpec{name: name, fn: fn, maxRows: DefaultMaxRows}
		for _, o := range opts {
			o(q)
		}
		p.queries = append(p.queries, q)
	}
}

// QuerySpec is a declared read query.
type QuerySpec struct {
	name    string
	fn      QueryFunc
	params  []ParamSpec
	maxRows int
	doc     string
}

// ParamSpec is a declared query parameter.
type ParamSpec struct {
	Name     string
	Type     ParamType
	Required bool
}

// Name returns the query's name.
func (q *QuerySpec) Name() string { return q.name }

// Params returns the query's parameters.
func (q *QuerySpec) Params() []ParamSpec { return slices.Clone(q.params) }

// MaxRows returns the query's row limit.
func (q *QuerySpec) MaxRows() int { return q.maxRows }

// Description returns the query's description.
func (q *QuerySpec) Description() string { return q.doc }

func (p *Projection) validateQueries() error {
	for i, q := range p.queries {
		where := fmt.Sprintf("projection %s: query %q", p.group, q.name)
		if !sqlIdent(q.name) {
			return factum.IllegalArgument(where + ": the name is lower-case letters, digits and '_', first a letter")
		}
		if q.fn == nil {
			return factum.IllegalArgument(where + ": no function")
		}
		if q.maxRows < 1 {
			return factum.IllegalArgument(where + ": MaxRows is less than 1")
		}
		for j, pr := range q.params {
			if err := factum.ValidateName("query parameter", pr.Name); err != nil || pr.Name == LimitParam || strings.ContainsAny(pr.Name, "-.") {
				return factum.IllegalArgument(fmt.Sprintf("%s: parameter %q: a letter, then letters, digits and '_', not %q", where, pr.Name, LimitParam))
			}
			if pr.Type < String || pr.Type > Time {
				return factum.IllegalArgument(fmt.Sprintf("%s: parameter %q: unknown type %d", where, pr.Name, pr.Type))
			}
			if slices.ContainsFunc(q.params[:j], func(o ParamSpec) bool { return o.Name == pr.Name }) {
				return factum.IllegalArgument(fmt.Sprintf("%s: parameter %q is declared twice", where, pr.Name))
			}
		}
		if slices.ContainsFunc(p.queries[:i], func(o *QuerySpec) bool { return o.name == q.name }) {
			return factum.IllegalArgument(where + " is declared twice")
		}
	}
	return nil
}

// Args are a query's parameter values, parsed to their declared types.
type Args struct{ m map[string]any }

// Has reports whether the parameter was given.
func (a Args) Has(name string) bool { _, ok := a.m[name]; return ok }

// String returns a String parameter, or "".
func (a Args) String(name string) string { s, _ := a.m[name].(string); return s }

// Int returns an Int parameter, or 0.
func (a Args) Int(name string) int64 { n, _ := a.m[name].(int64); return n }

// Bool returns a Bool parameter, or false.
func (a Args) Bool(name string) bool { b, _ := a.m[name].(bool); return b }

// Time returns a Time parameter, or the zero time.
func (a Args) Time(name string) time.Time { t, _ := a.m[name].(time.Time); return t }

// ParseArgs parses raw parameter values (one per name) for q: an unknown
// parameter, a missing required one, or a value that is not of its type is
// IllegalArgument. It returns the row limit too: LimitParam's value, or
// the query's MaxRows.
func (q *QuerySpec) ParseArgs(raw map[string]string) (Args, int, error) {
	a := Args{m: make(map[string]any, len(raw))}
	limit := q.maxRows
	for k, v := range raw {
		if k == LimitParam {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > q.maxRows {
				return Args{}, 0, factum.IllegalArgument(fmt.Sprintf("query %s: %s=%q: want an integer from 1 to %d", q.name, LimitParam, v, q.maxRows))
			}
			limit = n
			continue
		}
		i := slices.IndexFunc(q.params, func(p ParamSpec) bool { return p.Name == k })
		if i < 0 {
			return Args{}, 0, factum.IllegalArgument(fmt.Sprintf("query %s has no parameter %q", q.name, k))
		}
		val, err := parseParam(q.params[i].Type, v)
		if err != nil {
			return Args{}, 0, factum.IllegalArgument(fmt.Sprintf("query %s: parameter %s=%q: %v", q.name, k, v, err))
		}
		a.m[k] = val
	}
	for _, p := range q.params {
		if _, ok := a.m[p.Name]; p.Required && !ok {
			return Args{}, 0, factum.IllegalArgument(fmt.Sprintf("query %s: parameter %s is required", q.name, p.Name))
		}
	}
	return a, limit, nil
}

func parseParam(t ParamType, v string) (any, error) {
	switch t {
	case String:
		if len(v) > MaxParamLen {
			return nil, fmt.Errorf("longer than %d bytes", MaxParamLen)
		}
		return v, nil
	case Int:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not an integer")
		}
		return n, nil
	case Bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("not a boolean")
		}
		return b, nil
	case Time:
		tm, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, fmt.Errorf("not an RFC 3339 time")
		}
		return tm, nil
	}
	return nil, fmt.Errorf("unknown type")
}

// Scope is what a QueryFunc reaches the read model through: the live
// build's tables, each filtered to the caller's tenant.
type Scope struct {
	tables Tables
	tenant string
}

// Tenant returns the caller's tenant (the rows From returns are its only).
func (s Scope) Tenant() string { return s.tenant }

// From returns, for the FROM clause, the declared table name as a
// subquery of the live build's rows whose tenant is the caller's, aliased
// as name: `SELECT status, n FROM ` + scope.From("orders") + ` WHERE …`.
// An undeclared name panics, which the query answers as an
// InternalServerError.
func (s Scope) From(name string) string {
	return "(SELECT * FROM " + s.tables.Name(name) + " WHERE tenant = '" + s.tenant + "') AS " + name
}

// validQueryTenant reports whether tenant can be spliced into a SQL
// string literal as it is: factum's tenant IDs are printable ASCII, and
// the quote and the backslash (an escape under PostgreSQL's
// standard_conforming_strings = off) are refused.
func validQueryTenant(tenant string) error {
	if err := factum.ValidateID("tenant", tenant); err != nil {
		return err
	}
	if strings.ContainsAny(tenant, `'\`) {
		return factum.IllegalArgument(fmt.Sprintf("tenant %q: a projection query refuses a tenant with ' or \\", tenant))
	}
	return nil
}

// Result is a query's answer: at most its row limit of rows, each a map
// of column to value, in the order the query returned them.
type Result struct {
	Columns []string         `json:"columns"`
	Rows    []map[string]any `json:"rows"`
	// Truncated reports that the query had more rows than the limit.
	Truncated bool `json:"truncated"`
	// Build and Version identify the live build that answered.
	Build   int `json:"build"`
	Version int `json:"version"`
}
