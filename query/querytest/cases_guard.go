package querytest

import (
	"fmt"

	"github.com/factum-go/factum/query"
)

func projected(name string, q query.Query, docs ...string) Case {
	c := list(name, q)
	c.Documents = docs
	return c
}

func projectionCases() []Case {
	byID := func(id string, p query.Projection) query.Query {
		return query.Query{Condition: query.ID(id), Projection: p}
	}
	return []Case{
		projected("include nested paths", byID("d01", query.Projection{Include: []string{name, city}}),
			`{"aggregateId":"d01","state":{"name":"Alpha","address":{"city":"Paris"}}}`),
		projected("exclude", byID("d05", query.Projection{Exclude: []string{"state", "eventId", "firstOperator", "operator", "firstEventTime", "eventTime", "snapshotTime"}}),
			`{"aggregateId":"d05","tenantId":"t2","ownerId":"","version":5,"deleted":false}`),
		projected("include null and missing, id excluded", byID("d07", query.Projection{Include: []string{qty, "state.nothing"}, Exclude: []string{"aggregateId"}}),
			`{"state":{"qty":null}}`),
		projected("include an array", byID("d16", query.Projection{Include: []string{items}}),
			`{"aggregateId":"d16","state":{"items":[{"sku":"A1","qty":3},{"sku":"C3","qty":1}]}}`),
		projected("include never indexes arrays", byID("d01", query.Projection{Include: []string{"state.tags.0"}}),
			`{"aggregateId":"d01"}`),
		projected("include then exclude inside", byID("d01", query.Projection{Include: []string{address}, Exclude: []string{"state.address.zip"}}),
			`{"aggregateId":"d01","state":{"address":{"city":"Paris"}}}`),
		projected("exclude nested keeps the rest", byID("d09", query.Projection{Exclude: []string{"state", "eventId", "firstOperator", "operator", "firstEventTime", "eventTime", "snapshotTime", "tenantId", "ownerId", "deleted"}}),
			`{"aggregateId":"d09","version":2}`),
		projected("projection with sort and limit", query.Query{
			Sort:       []query.Sort{query.SortDesc(price)},
			Limit:      2,
			Projection: query.Projection{Include: []string{price}},
		}, `{"aggregateId":"d08","state":{"price":100}}`, `{"aggregateId":"d12","state":{"price":40}}`),
		{
			Name: "paged projection", Kind: KindPaged, Total: 18,
			Paged: query.PagedQuery{
				Sort:       []query.Sort{query.SortAsc(price)},
				Projection: query.Projection{Include: []string{"version"}},
				Pagination: query.Pagination{Index: 1, Size: 2},
			},
			Documents: []string{`{"aggregateId":"d04","version":2}`, `{"aggregateId":"d10","version":6}`},
		},
		{
			Name: "single projection", Kind: KindSingle,
			Query:     byID("d20", query.Projection{Include: []string{city, "ownerId"}}),
			Documents: []string{`{"aggregateId":"d20","ownerId":"u1","state":{"address":{"city":"PARIS"}}}`},
		},
	}
}

// guardCases hold every guard at its default limit: just inside it the
// query runs, just beyond it the query is refused.
func guardCases() []Case {
	lim := query.DefaultLimits()
	ors := func(n int) query.Condition {
		cs := make([]query.Condition, n)
		for i := range cs {
			cs[i] = query.ID(fmt.Sprintf("d%02d", i%20+1))
		}
		return query.Or(cs...)
	}
	values := func(n int) []any {
		vs := make([]any, n)
		for i := range vs {
			vs[i] = fmt.Sprintf("v%d", i)
		}
		vs[0] = "d03"
		return vs
	}
	sorts := func(n int) []query.Sort {
		s := make([]query.Sort, n)
		for i := range s {
			s[i] = query.SortAsc(fmt.Sprintf("state.k%d", i))
		}
		return s
	}
	paths := func(n int) []string {
		p := make([]string, n)
		for i := range p {
			p[i] = fmt.Sprintf("state.p%d", i)
		}
		return p
	}
	page := func(index, size int) query.PagedQuery {
		return query.PagedQuery{Condition: query.ID("d01"), Pagination: query.Pagination{Index: index, Size: size}}
	}
	field := func(path string) query.Query { return where(query.Eq(path, 1)) }
	q := func(c query.Condition) query.Query { return where(c) }
	cs := []Case{
		list("limit at the maximum", query.Query{Condition: query.ID("d01"), Limit: lim.MaxListSize}, "d01"),
		refused(list("limit above the maximum", query.Query{Limit: lim.MaxListSize + 1})),
		refused(list("negative limit", query.Query{Limit: -1})),
		paged("page size at the maximum", page(1, lim.MaxPageSize), 1, "d01"),
		refused(paged("page size above the maximum", page(1, lim.MaxPageSize+1), 0)),
		paged("page window at the maximum", page(lim.MaxPageWindow/lim.MaxPageSize, lim.MaxPageSize), 1),
		refused(paged("page window exceeded", page(lim.MaxPageWindow/lim.MaxPageSize+1, lim.MaxPageSize), 0)),
		refused(paged("page window exceeded by small pages", page(lim.MaxPageWindow/10+1, 10), 0)),
		refused(paged("negative page index", page(-1, 10), 0)),
		refused(paged("negative page size", page(1, -10), 0)),
		list("condition nodes at the maximum", q(ors(lim.MaxConditionNodes-1)),
			"d01", "d02", "d03", "d04", "d05", "d06", "d07", "d08", "d09", "d10",
			"d11", "d12", "d13", "d14", "d15", "d16", "d19", "d20"),
		refused(list("condition nodes above the maximum", q(ors(lim.MaxConditionNodes)))),
		refused(count("count checks condition nodes", ors(lim.MaxConditionNodes), 0)),
		list("condition values at the maximum", q(query.In(name, values(lim.MaxConditionValues)...))),
		list("condition values at the maximum match", q(query.In("aggregateId", values(lim.MaxConditionValues)...)), "d03"),
		refused(list("condition values above the maximum", q(query.In(name, values(lim.MaxConditionValues+1)...)))),
		refused(list("condition values counted across nodes", q(query.And(
			query.In(name, values(lim.MaxConditionValues/2)...),
			query.NotIn(name, values(lim.MaxConditionValues/2+1)...))))),
		list("sort fields at the maximum", query.Query{Condition: query.ID("d02"), Sort: sorts(lim.MaxSortFields)}, "d02"),
		refused(list("sort fields above the maximum", query.Query{Sort: sorts(lim.MaxSortFields + 1)})),
		list("projection fields at the maximum", query.Query{Condition: query.ID("d02"), Projection: query.Projection{Include: paths(lim.MaxProjectionFields)}}, "d02"),
		refused(list("projection fields above the maximum", query.Query{Projection: query.Projection{Include: paths(lim.MaxProjectionFields), Exclude: []string{"x"}}})),
	}
	for _, path := range []string{"", "state.na-me", "state..name", ".state", "state.", "$where", "state.name'--", "state.name[0]", "state/name", "ståte", string(make([]byte, query.MaxPathLen+1))} {
		cs = append(cs, refused(list(fmt.Sprintf("field path %.24q refused", path), field(path))))
	}
	cs = append(cs,
		refused(list("sort path refused", query.Query{Sort: []query.Sort{{Field: "state.x;drop"}}})),
		refused(list("sort direction refused", query.Query{Sort: []query.Sort{{Field: name, Direction: "UP"}}})),
		refused(list("projection path refused", query.Query{Projection: query.Projection{Include: []string{"state.*"}}})),
		refused(list("unknown operator", q(query.Condition{Field: name, Operator: "LIKE", Value: "a%"}))),
		refused(list("eq null", q(query.Condition{Field: name, Operator: query.OpEq}))),
		refused(list("eq object", q(query.Eq(name, map[string]any{"a": 1})))),
		refused(list("eq list", q(query.Eq(name, []any{"a"})))),
		refused(list("eq integer beyond 2^53", q(query.Eq(qty, int64(1)<<53+1)))),
		refused(list("gt bool", q(query.Gt(qty, true)))),
		refused(list("between mixed kinds", q(query.Between(qty, 1, "9")))),
		refused(list("between one bound", q(query.Condition{Field: qty, Operator: query.OpBetween, Value: []any{1.0}}))),
		refused(list("in empty list", q(query.In(name)))),
		refused(list("in scalar", q(query.Condition{Field: name, Operator: query.OpIn, Value: "a"}))),
		refused(list("in with null", q(query.In(name, "a", nil)))),
		refused(list("all in empty list", q(query.AllIn(tags)))),
		refused(list("ids empty", q(query.IDs()))),
		refused(list("id empty", q(query.ID("")))),
		refused(list("tenant not a string", q(query.Condition{Operator: query.OpTenant, Value: 7.0}))),
		refused(list("contains number", q(query.Condition{Field: name, Operator: query.OpContains, Value: 7.0}))),
		refused(list("ignore case on eq", q(query.Eq(name, "a").IgnoreCase()))),
		refused(list("zone on eq", q(query.Eq(name, "a").InZone("UTC")))),
		refused(list("unknown zone", q(query.Today(created).InZone("Mars/Olympus")))),
		refused(list("recent days zero", q(query.RecentDays(created, 0)))),
		refused(list("recent days fraction", q(query.Condition{Field: created, Operator: query.OpRecentDays, Value: 1.5}))),
		refused(list("today with value", q(query.Condition{Field: created, Operator: query.OpToday, Value: 1.0}))),
		refused(list("exists with string", q(query.Condition{Field: note, Operator: query.OpExists, Value: "yes"}))),
		refused(list("null with value", q(query.Condition{Field: note, Operator: query.OpNull, Value: true}))),
		refused(list("id inside elem match", q(query.ElemMatch(items, query.ID("d01"))))),
		refused(list("elem match without children", q(query.ElemMatch(items)))),
		refused(list("field on and", q(query.Condition{Field: name, Operator: query.OpAnd}))),
		refused(list("field on id", q(query.Condition{Field: name, Operator: query.OpID, Value: "d01"}))),
		refused(list("children on eq", q(query.Condition{Field: name, Operator: query.OpEq, Value: "a", Children: []query.Condition{query.All()}}))),
		refused(list("eq without field", q(query.Condition{Operator: query.OpEq, Value: "a"}))),
		refused(list("deleted state unknown", q(query.Condition{Operator: query.OpDeleted, Value: "MAYBE"}))),
		refused(list("guard inside children", q(query.And(query.Or(query.Eq("state.bad path", 1)))))),
		refused(single("single refuses bad conditions", q(query.Eq("", 1)), "")),
	)
	return cs
}
