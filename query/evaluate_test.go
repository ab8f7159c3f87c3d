package query_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// randomDocs builds n documents whose "v" fields draw from every rank,
// with many ties, so that sorting exercises every comparison.
func randomDocs(r *rand.Rand, n int) []query.Document {
	values := []any{nil, true, false, -1.5, 0.0, 2.0, 2.0, 7.0, "", "a", "B", "b", []any{1.0}, map[string]any{}}
	docs := make([]query.Document, n)
	for i := range docs {
		d := query.Document{"aggregateId": fmt.Sprintf("id%05d", r.IntN(1_000_000)*100_000+i)}
		for _, f := range []string{"v", "w"} {
			if r.IntN(8) > 0 {
				d[f] = values[r.IntN(len(values))]
			}
		}
		docs[i] = d
	}
	return docs
}

// TestSelectWindowsAgree checks that every page of a sorted query equals
// the same slice of the full result, whichever way Select gets it (a
// bounded heap for small windows, a full sort for large ones).
func TestSelectWindowsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	docs := randomDocs(r, 2000)
	sorts := [][]query.Sort{
		{query.SortAsc("v")},
		{query.SortDesc("v"), query.SortAsc("w")},
		{query.SortDesc("w"), query.SortDesc("v")},
		nil,
	}
	p := query.Planner{Limits: query.Limits{MaxListSize: -1, MaxPageWindow: -1, MaxPageSize: -1}}
	for _, s := range sorts {
		full, err := p.List(query.Query{Condition: query.Deleted(query.AnyDeletion), Sort: s, Limit: len(docs)})
		if err != nil {
			t.Fatal(err)
		}
		all, total, err := query.Select(full, docs)
		if err != nil || total != len(docs) || len(all) != len(docs) {
			t.Fatalf("full select: %d of %d, %v", len(all), total, err)
		}
		checkOrdered(t, docs, all, full.Sort)
		for _, size := range []int{1, 7, 100, 499} {
			for _, index := range []int{1, 2, 5} {
				plan, err := p.Paged(query.PagedQuery{
					Condition:  query.Deleted(query.AnyDeletion),
					Sort:       s,
					Pagination: query.Pagination{Index: index, Size: size},
				})
				if err != nil {
					t.Fatal(err)
				}
				got, total, err := query.Select(plan, docs)
				if err != nil || total != len(docs) {
					t.Fatalf("select: total %d, %v", total, err)
				}
				lo := min((index-1)*size, len(all))
				want := all[lo:min(lo+size, len(all))]
				if !slices.Equal(got, want) {
					t.Fatalf("sort %v page %d size %d = %v, want %v", s, index, size, got, want)
				}
			}
		}
	}
}

// checkOrdered verifies the order of positions against an independent
// reading of the documented order.
func checkOrdered(t *testing.T, docs []query.Document, pos []int, sorts []query.Sort) {
	t.Helper()
	rank := func(v any, ok bool) (int, float64, string) {
		if !ok {
			return 0, 0, ""
		}
		switch x := v.(type) {
		case nil:
			return 1, 0, ""
		case bool:
			if x {
				return 3, 0, ""
			}
			return 2, 0, ""
		case float64:
			return 4, x, ""
		case string:
			return 5, 0, x
		}
		return 6, 0, ""
	}
	for i := 1; i < len(pos); i++ {
		a, b := docs[pos[i-1]], docs[pos[i]]
		order := 0
		for _, s := range sorts {
			va, oka := a.Lookup(s.Field)
			vb, okb := b.Lookup(s.Field)
			ra, na, sa := rank(va, oka)
			rb, nb, sb := rank(vb, okb)
			c := 0
			switch {
			case ra != rb:
				c = ra - rb
			case na != nb:
				c = map[bool]int{true: -1, false: 1}[na < nb]
			case sa != sb:
				c = map[bool]int{true: -1, false: 1}[sa < sb]
			}
			if s.Direction == query.Desc {
				c = -c
			}
			if c != 0 {
				order = c
				break
			}
		}
		if order > 0 {
			t.Fatalf("positions %d and %d out of order: %v then %v", i-1, i, a, b)
		}
	}
}

func TestSelectRefusesMalformedPlans(t *testing.T) {
	docs := []query.Document{{"aggregateId": "a"}}
	for _, plan := range []query.Plan{
		{Condition: query.ID("a"), Limit: 1},
		{Limit: -1},
		{Offset: -1, Limit: 1},
		{Limit: 1, Sort: []query.Sort{{Field: "a-b"}}},
		{Limit: 1, Sort: []query.Sort{{Field: "a", Direction: "SIDEWAYS"}}},
	} {
		if _, _, err := query.Select(plan, docs); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("Select(%+v) = %v, want IllegalArgument", plan, err)
		}
	}
	got, total, err := query.Select(query.Plan{Limit: 0}, docs)
	if err != nil || len(got) != 0 || total != 1 {
		t.Errorf("limit 0: %v, %d, %v", got, total, err)
	}
}

func TestProjectionApply(t *testing.T) {
	doc := query.Document{
		"id":  "x",
		"a":   map[string]any{"b": 1.0, "c": map[string]any{"d": "deep"}, "list": []any{map[string]any{"e": 1.0}}},
		"s":   "scalar",
		"sub": query.Document{"k": "v"},
	}
	cases := []struct {
		p    query.Projection
		want query.Document
	}{
		{query.Projection{}, doc},
		{query.Projection{Include: []string{"a.b"}}, query.Document{"a": map[string]any{"b": 1.0}}},
		{query.Projection{Include: []string{"a.c.d", "s"}}, query.Document{"a": map[string]any{"c": map[string]any{"d": "deep"}}, "s": "scalar"}},
		{query.Projection{Include: []string{"a.b", "a"}}, query.Document{"a": doc["a"]}},
		{query.Projection{Include: []string{"a", "a.b"}}, query.Document{"a": doc["a"]}},
		{query.Projection{Include: []string{"s.x", "a.list.e", "nothing"}}, query.Document{}},
		{query.Projection{Include: []string{"sub.k"}}, query.Document{"sub": map[string]any{"k": "v"}}},
		{query.Projection{Exclude: []string{"a", "sub", "nothing.here", "s.x"}}, query.Document{"id": "x", "s": "scalar"}},
		{query.Projection{Include: []string{"a"}, Exclude: []string{"a.c", "a.list"}}, query.Document{"a": map[string]any{"b": 1.0}}},
	}
	for _, c := range cases {
		before := doc.Clone()
		got := c.p.Apply(doc)
		if !reflect.DeepEqual(normalize(got), normalize(c.want)) {
			t.Errorf("%+v.Apply = %v, want %v", c.p, got, c.want)
		}
		if !reflect.DeepEqual(doc.Clone(), before) {
			t.Fatalf("%+v.Apply changed its input", c.p)
		}
		// The result shares nothing with the input.
		if a, ok := got["a"].(map[string]any); ok {
			a["b"] = "changed"
			if doc["a"].(map[string]any)["b"] != 1.0 {
				t.Fatalf("%+v.Apply shares objects with its input", c.p)
			}
		}
	}
}

// normalize turns nested Documents into maps, for DeepEqual.
func normalize(d query.Document) any {
	return d.Clone()
}
