package query_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the DST test needs America/New_York on any machine

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
)

func TestPlanShape(t *testing.T) {
	p := query.Planner{}
	plan, err := p.List(query.Query{
		Condition:  query.ID("a"),
		Sort:       []query.Sort{{Field: "state.x"}, {Field: "version", Direction: "desc"}},
		Projection: query.Projection{Include: []string{"state.x"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := query.Plan{
		Condition: query.And(
			query.Eq("aggregateId", "a"),
			query.Ne("deleted", true),
		),
		Sort: []query.Sort{
			{Field: "state.x", Direction: query.Asc},
			{Field: "version", Direction: query.Desc},
			{Field: "aggregateId", Direction: query.Asc},
		},
		Projection: query.Projection{Include: []string{"state.x", "aggregateId"}},
		Offset:     0,
		Limit:      query.DefaultDefaultListSize,
	}
	if !reflect.DeepEqual(plan, want) {
		t.Errorf("plan\n got  %#v\n want %#v", plan, want)
	}
	for _, op := range collectOperators(plan.Condition) {
		if !op.IsCore() {
			t.Errorf("plan keeps non-core operator %s", op)
		}
	}
}

func collectOperators(c query.Condition) []query.Operator {
	ops := []query.Operator{c.Operator}
	for _, ch := range c.Children {
		ops = append(ops, collectOperators(ch)...)
	}
	return ops
}

func TestPlanSortStopsAtTheID(t *testing.T) {
	plan, err := query.Planner{}.List(query.Query{Sort: []query.Sort{
		query.SortDesc("aggregateId"), query.SortAsc("state.never"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []query.Sort{query.SortDesc("aggregateId")}; !reflect.DeepEqual(plan.Sort, want) {
		t.Errorf("sort = %v, want %v: keys after the unique ID cannot matter", plan.Sort, want)
	}
}

func TestPlanProjectionKeepsIDUnlessExcluded(t *testing.T) {
	cases := []struct {
		in, want query.Projection
	}{
		{query.Projection{}, query.Projection{}},
		{query.Projection{Exclude: []string{"state"}}, query.Projection{Exclude: []string{"state"}}},
		{query.Projection{Include: []string{"a"}}, query.Projection{Include: []string{"a", "aggregateId"}}},
		{query.Projection{Include: []string{"aggregateId", "a"}}, query.Projection{Include: []string{"aggregateId", "a"}}},
		{query.Projection{Include: []string{"a"}, Exclude: []string{"aggregateId"}}, query.Projection{Include: []string{"a"}, Exclude: []string{"aggregateId"}}},
	}
	for _, c := range cases {
		plan, err := query.Planner{}.Single(query.Query{Projection: c.in})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(plan.Projection, c.want) {
			t.Errorf("projection %+v planned as %+v, want %+v", c.in, plan.Projection, c.want)
		}
	}
}

// TestTenantScopeCannotBeEscaped checks that no condition reaches another
// tenant's documents through a scoped Planner.
func TestTenantScopeCannotBeEscaped(t *testing.T) {
	data := querytest.Dataset()
	c := corpusCollection(data)
	c.Planner.Tenant = "t2"
	conds := []query.Condition{
		query.All(),
		query.Tenant("t1"),
		query.Or(query.Tenant("t1"), query.All()),
		query.Nor(query.Tenant("t2")),
		query.Deleted(query.AnyDeletion),
		query.Ne("tenantId", "t2"),
		query.IDs("d01", "d04", "d17", "d18"),
	}
	for _, cond := range conds {
		docs, err := c.List(context.Background(), query.Query{Condition: cond})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if d["tenantId"] != "t2" {
				t.Errorf("condition %+v reached %s of tenant %v", cond, d["aggregateId"], d["tenantId"])
			}
		}
		n, err := c.Count(context.Background(), cond)
		if err != nil {
			t.Fatal(err)
		}
		if int(n) != len(docs) {
			t.Errorf("condition %+v: count %d, list %d", cond, n, len(docs))
		}
	}
	docs, _ := c.List(context.Background(), query.Query{Condition: query.Deleted(query.AnyDeletion)})
	if len(docs) != 7 {
		t.Errorf("tenant t2 with deleted: %d documents, want 7", len(docs))
	}
}

func TestNamesDeletion(t *testing.T) {
	f := query.DefaultFields()
	cases := []struct {
		c    query.Condition
		want bool
	}{
		{query.All(), false},
		{query.Eq("state.deleted", true), false},
		{query.Deleted(query.Active), true},
		{query.False("deleted"), true},
		{query.And(query.Eq("a", 1), query.Or(query.Exists("deleted", true))), true},
		{query.ElemMatch("items", query.True("deleted")), false},
		{query.Nor(query.Deleted(query.DeletedOnly)), true},
	}
	for _, c := range cases {
		if got := query.NamesDeletion(c.c, f); got != c.want {
			t.Errorf("NamesDeletion(%+v) = %v, want %v", c.c, got, c.want)
		}
	}
	if !query.NamesDeletion(query.True("gone"), query.Fields{Deleted: "gone"}) {
		t.Error("NamesDeletion ignores a custom Deleted field")
	}
}

func TestDateBounds(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	ms := func(tm time.Time) float64 { return float64(tm.UnixMilli()) }
	rng := func(lo, hi time.Time) query.Condition {
		return query.And(query.Gte("t", ms(lo)), query.Lt("t", ms(hi)))
	}
	day := func(loc *time.Location, y int, m time.Month, d int) time.Time {
		return time.Date(y, m, d, 0, 0, 0, 0, loc)
	}
	// Sunday 2026-03-08 is 23 hours long in New York (DST starts).
	dst := time.Date(2026, 3, 8, 12, 0, 0, 0, ny)
	// Thursday 2026-01-01, for month and week boundaries across a year.
	newYear := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		now  time.Time
		loc  *time.Location
		c    query.Condition
		want query.Condition
	}{
		{"today on a DST day", dst, ny, query.Today("t"), rng(day(ny, 2026, 3, 8), day(ny, 2026, 3, 9))},
		{"yesterday across DST", dst.Add(24 * time.Hour), ny, query.Yesterday("t"), rng(day(ny, 2026, 3, 8), day(ny, 2026, 3, 9))},
		{"this week ends on a Sunday", dst, ny, query.ThisWeek("t"), rng(day(ny, 2026, 3, 2), day(ny, 2026, 3, 9))},
		{"last month across a year", newYear, time.UTC, query.LastMonth("t"), rng(day(time.UTC, 2025, 12, 1), day(time.UTC, 2026, 1, 1))},
		{"this month", newYear, time.UTC, query.ThisMonth("t"), rng(day(time.UTC, 2026, 1, 1), day(time.UTC, 2026, 2, 1))},
		{"last week across a year", newYear, time.UTC, query.LastWeek("t"), rng(day(time.UTC, 2025, 12, 22), day(time.UTC, 2025, 12, 29))},
		{"next week", newYear, time.UTC, query.NextWeek("t"), rng(day(time.UTC, 2026, 1, 5), day(time.UTC, 2026, 1, 12))},
		{"tomorrow", newYear, time.UTC, query.Tomorrow("t"), rng(day(time.UTC, 2026, 1, 2), day(time.UTC, 2026, 1, 3))},
		{"before today", newYear, time.UTC, query.BeforeToday("t"), query.Lt("t", ms(day(time.UTC, 2026, 1, 1)))},
		{"recent days", newYear, time.UTC, query.RecentDays("t", 7), rng(day(time.UTC, 2025, 12, 26), day(time.UTC, 2026, 1, 2))},
		{"earlier days", newYear, time.UTC, query.EarlierDays("t", 7), query.Lt("t", ms(day(time.UTC, 2025, 12, 26)))},
		{"zone option wins", newYear, ny, query.Today("t").InZone("UTC"), rng(day(time.UTC, 2026, 1, 1), day(time.UTC, 2026, 1, 2))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := query.Planner{Now: func() time.Time { return c.now }, Location: c.loc}
			got, err := p.Count(query.And(c.c, query.Deleted(query.AnyDeletion)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("lowered to %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestPlannerReadsTheClockOncePerQuery(t *testing.T) {
	calls := 0
	p := query.Planner{Now: func() time.Time { calls++; return time.Now() }}
	_, err := p.List(query.Query{Condition: query.Or(query.Today("a"), query.Yesterday("b"), query.ThisWeek("c"))})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("clock read %d times, want 1: the bounds of one query must agree", calls)
	}
	if _, err := p.List(query.Query{}); err != nil || calls != 1 {
		t.Errorf("a query without dates read the clock (%d calls, %v)", calls, err)
	}
}

func TestLimits(t *testing.T) {
	d := query.DefaultLimits()
	want := query.Limits{MaxListSize: 1000, DefaultListSize: 100, MaxPageSize: 200, DefaultPageSize: 10,
		MaxPageWindow: 10000, MaxConditionNodes: 128, MaxConditionValues: 1000, MaxSortFields: 8, MaxProjectionFields: 64}
	if d != want {
		t.Errorf("DefaultLimits() = %+v, want %+v", d, want)
	}
	// Defaults never exceed the maximum.
	p := query.Planner{Limits: query.Limits{MaxListSize: 5, MaxPageSize: 3}}
	if plan, err := p.List(query.Query{}); err != nil || plan.Limit != 5 {
		t.Errorf("default list size under MaxListSize 5: %d, %v", plan.Limit, err)
	}
	if plan, err := p.Paged(query.PagedQuery{}); err != nil || plan.Limit != 3 {
		t.Errorf("default page size under MaxPageSize 3: %d, %v", plan.Limit, err)
	}
	// A negative maximum turns the guard off.
	open := query.Planner{Limits: query.Limits{MaxListSize: -1, MaxPageWindow: -1}}
	if _, err := open.List(query.Query{Limit: 1_000_000}); err != nil {
		t.Errorf("list without a size guard: %v", err)
	}
	if plan, err := open.Paged(query.PagedQuery{Pagination: query.Pagination{Index: 10_000, Size: 100}}); err != nil || plan.Offset != 999_900 {
		t.Errorf("paging without a window guard: offset %d, %v", plan.Offset, err)
	}
	if _, err := open.Paged(query.PagedQuery{Pagination: query.Pagination{Index: 1 << 40, Size: 100}}); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("an overflowing page: %v, want IllegalArgument", err)
	}
}

// TestGuardErrorsNameTheGuard checks that each refusal says which guard
// refused, so a caller can fix the query.
func TestGuardErrorsNameTheGuard(t *testing.T) {
	p := query.Planner{}
	many := make([]query.Condition, 200)
	for i := range many {
		many[i] = query.All()
	}
	vals := make([]any, 1001)
	for i := range vals {
		vals[i] = 1.0
	}
	cases := []struct {
		name, mention string
		err           error
	}{
		{"list size", "maximum list size", second(p.List(query.Query{Limit: 5000}))},
		{"page size", "maximum page size", second(p.Paged(query.PagedQuery{Pagination: query.Pagination{Size: 500}}))},
		{"page window", "page window", second(p.Paged(query.PagedQuery{Pagination: query.Pagination{Index: 2000, Size: 10}}))},
		{"nodes", "nodes", second(p.Count(query.And(many...)))},
		{"values", "values", second(p.Count(query.In("a", vals...)))},
		{"sort", "sort fields", second(p.List(query.Query{Sort: make([]query.Sort, 9)}))},
		{"projection", "projection fields", second(p.List(query.Query{Projection: query.Projection{Include: make([]string, 65)}}))},
		{"path", "state.a b", second(p.Count(query.Eq("state.a b", 1)))},
		{"where", "condition.children[1]", second(p.Count(query.And(query.All(), query.Eq("x", nil))))},
	}
	for _, c := range cases {
		if !errors.Is(c.err, factum.ErrIllegalArgument) {
			t.Errorf("%s: %v, want IllegalArgument", c.name, c.err)
			continue
		}
		if !strings.Contains(c.err.Error(), c.mention) {
			t.Errorf("%s: error %q does not mention %q", c.name, c.err, c.mention)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestPlannerRefusesNonFiniteNumbers(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []query.Condition{
		{Field: "a", Operator: query.OpEq, Value: nan},
		{Field: "a", Operator: query.OpGt, Value: inf},
		{Field: "a", Operator: query.OpIn, Value: []any{1.0, nan}},
		{Field: "a", Operator: query.OpBetween, Value: []any{-inf, 1.0}},
		query.Eq("a", float32(math.NaN())),
	} {
		if _, err := (query.Planner{}).Count(c); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("Count(%+v) = %v, want IllegalArgument", c, err)
		}
	}
}

func TestHugePagesAreRefused(t *testing.T) {
	open := query.Planner{Limits: query.Limits{MaxPageSize: -1, MaxPageWindow: -1}}
	for _, p := range []query.Pagination{{Index: 1 << 40, Size: 1 << 40}, {Index: math.MaxInt, Size: 2}, {Index: 2, Size: math.MaxInt}} {
		if _, err := open.Paged(query.PagedQuery{Pagination: p}); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("Paged(%+v) = %v, want IllegalArgument", p, err)
		}
	}
}
