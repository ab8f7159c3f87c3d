package query_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// TestSizesAndSortKeys pins how the planner resolves list limits and page
// sizes (0 is the default, the maximum is allowed, a negative size or one
// above the maximum is refused) and checks sort keys, with the refusals'
// exact texts; the in-memory evaluator checks a plan's sort keys with the
// same texts.
func TestSizesAndSortKeys(t *testing.T) {
	p := query.Planner{Limits: query.Limits{MaxListSize: 50, DefaultListSize: 20, MaxPageSize: 30, DefaultPageSize: 7}}
	list := func(q query.Query) (query.Plan, error) { return p.List(q) }
	page := func(size int) func(query.Query) (query.Plan, error) {
		return func(q query.Query) (query.Plan, error) {
			return p.Paged(query.PagedQuery{Condition: q.Condition, Sort: q.Sort, Pagination: query.Pagination{Index: 2, Size: size}})
		}
	}
	single := func(q query.Query) (query.Plan, error) { return p.Single(q) }
	sorted := func(s ...query.Sort) query.Query { return query.Query{Sort: s} }
	tests := []struct {
		name      string
		plan      func(query.Query) (query.Plan, error)
		q         query.Query
		wantLimit int
		wantOff   int
		wantErr   string
	}{
		{"list default", list, query.Query{}, 20, 0, ""},
		{"list at the maximum", list, query.Query{Limit: 50}, 50, 0, ""},
		{"list above the maximum", list, query.Query{Limit: 51}, 0, 0, "query: list limit 51 is above the maximum list size 50"},
		{"list negative", list, query.Query{Limit: -1}, 0, 0, "query: list limit -1 is negative"},
		{"page default", page(0), query.Query{}, 7, 7, ""},
		{"page at the maximum", page(30), query.Query{}, 30, 30, ""},
		{"page above the maximum", page(31), query.Query{}, 0, 0, "query: page size 31 is above the maximum page size 30"},
		{"page negative", page(-2), query.Query{}, 0, 0, "query: page size -2 is negative"},
		{"single ignores the limit", single, query.Query{Limit: -1}, 1, 0, ""},
		{"sort directions in any case", list, sorted(query.Sort{Field: "state.a", Direction: "desc"}, query.Sort{Field: "state.b"}), 20, 0, ""},
		{"sort direction unknown", list, sorted(query.Sort{Field: "state.a"}, query.Sort{Field: "state.b", Direction: "UP"}),
			0, 0, `query: sort[1]: direction "UP": want ASC or DESC`},
		{"sort path empty", single, sorted(query.Sort{Field: ""}), 0, 0, "query: sort[0]: field path is empty"},
		{"sort path checked before direction", page(0), sorted(query.Sort{Field: "state.a"}, query.Sort{Field: "", Direction: "UP"}),
			0, 0, "query: sort[1]: field path is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := tt.plan(tt.q)
			if tt.wantErr != "" {
				if !errors.Is(err, factum.ErrIllegalArgument) || factum.MessageOf(err) != tt.wantErr {
					t.Fatalf("error %v, want IllegalArgument %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || plan.Limit != tt.wantLimit || plan.Offset != tt.wantOff {
				t.Fatalf("limit %d offset %d, %v; want limit %d offset %d", plan.Limit, plan.Offset, err, tt.wantLimit, tt.wantOff)
			}
		})
	}
	docs := []query.Document{{"id": "a"}, {"id": "b"}}
	for _, tt := range []struct {
		sort    []query.Sort
		wantErr string
	}{
		{[]query.Sort{{Field: "id"}, {Field: "id", Direction: "sideways"}}, `query: sort[1]: direction "sideways": want ASC or DESC`},
		{[]query.Sort{{Field: "a..b"}}, "query: sort[0]: "},
	} {
		_, _, err := query.Execute(query.Plan{Condition: query.All(), Sort: tt.sort, Limit: 2}, docs)
		if msg := factum.MessageOf(err); !errors.Is(err, factum.ErrIllegalArgument) || len(msg) < len(tt.wantErr) || msg[:len(tt.wantErr)] != tt.wantErr {
			t.Errorf("Execute with sort %+v: %v, want IllegalArgument %q", tt.sort, err, tt.wantErr)
		}
	}
}

// TestCollectionScopesEveryReadToTheTenant checks that Single, List, Paged
// and Count of a Collection whose planner has a Tenant see only that
// tenant's documents, whatever the query says.
func TestCollectionScopesEveryReadToTheTenant(t *testing.T) {
	docs := []query.Document{
		{"aggregateId": "a1", "tenantId": "acme", "state": map[string]any{"n": 1.0}},
		{"aggregateId": "b1", "tenantId": "bolt", "state": map[string]any{"n": 2.0}},
		{"aggregateId": "a2", "tenantId": "acme", "state": map[string]any{"n": 3.0}},
	}
	c := query.Collection{Planner: query.Planner{Tenant: "acme"}, Documents: docs}
	ctx := context.Background()
	bolt := query.Eq("tenantId", "bolt")
	if _, err := c.Single(ctx, query.Query{Condition: bolt}); !errors.Is(err, factum.ErrNotFound) {
		t.Errorf("Single of another tenant's document: %v, want NotFound", err)
	}
	if d, err := c.Single(ctx, query.Query{Sort: []query.Sort{query.SortDesc("state.n")}}); err != nil || d["aggregateId"] != "a2" {
		t.Errorf("Single = %v, %v; want a2", d, err)
	}
	if l, err := c.List(ctx, query.Query{}); err != nil || len(l) != 2 || l[0]["aggregateId"] != "a1" || l[1]["aggregateId"] != "a2" {
		t.Errorf("List = %v, %v; want a1, a2", l, err)
	}
	if pg, err := c.Paged(ctx, query.PagedQuery{Pagination: query.Pagination{Index: 2, Size: 1}}); err != nil || pg.Total != 2 || len(pg.List) != 1 || pg.List[0]["aggregateId"] != "a2" {
		t.Errorf("Paged = %+v, %v; want a2 of 2", pg, err)
	}
	if pg, err := c.Paged(ctx, query.PagedQuery{Condition: bolt}); err != nil || pg.Total != 0 || len(pg.List) != 0 {
		t.Errorf("Paged of another tenant's documents = %+v, %v; want none", pg, err)
	}
	if n, err := c.Count(ctx, query.All()); err != nil || n != 2 {
		t.Errorf("Count = %d, %v; want 2", n, err)
	}
	if _, err := c.List(ctx, query.Query{Limit: -1}); factum.MessageOf(err) != "query: list limit -1 is negative" {
		t.Errorf("List with a negative limit: %v", err)
	}
}
