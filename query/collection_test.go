package query_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/query/querytest"
)

func corpusCollection(data querytest.Data) query.Collection {
	return query.Collection{
		Planner: query.Planner{
			Now:      func() time.Time { return data.Now },
			Location: data.Location,
		},
		Documents: data.Documents,
	}
}

// TestCorpus runs the whole query corpus on the in-memory evaluator.
func TestCorpus(t *testing.T) {
	querytest.Run(t, func(t *testing.T, data querytest.Data) querytest.Evaluator {
		return corpusCollection(data)
	})
}

// TestCorpusCoversEveryOperator fails if an operator of the language has
// no case in the corpus.
func TestCorpusCoversEveryOperator(t *testing.T) {
	seen := map[query.Operator]bool{}
	var walk func(c query.Condition)
	walk = func(c query.Condition) {
		seen[c.Operator] = true
		for _, ch := range c.Children {
			walk(ch)
		}
	}
	kinds := map[querytest.Kind]bool{}
	for _, c := range querytest.Cases() {
		walk(c.Query.Condition)
		walk(c.Paged.Condition)
		walk(c.Condition)
		kinds[c.Kind] = true
	}
	for _, op := range query.Operators() {
		if !seen[op] {
			t.Errorf("no corpus case uses %s", op)
		}
	}
	if len(kinds) != 4 {
		t.Errorf("corpus covers kinds %v, want all four", kinds)
	}
}

// reversed is an evaluator whose lists come back in reverse order.
type reversed struct{ query.Collection }

func (r reversed) List(ctx context.Context, q query.Query) ([]query.Document, error) {
	docs, err := r.Collection.List(ctx, q)
	slices.Reverse(docs)
	return docs, err
}

// alwaysFound is an evaluator whose Single never reports NotFound.
type alwaysFound struct{ query.Collection }

func (a alwaysFound) Single(ctx context.Context, q query.Query) (query.Document, error) {
	d, err := a.Collection.Single(ctx, q)
	if errors.Is(err, factum.ErrNotFound) {
		return query.Document{}, nil
	}
	return d, err
}

// TestCorpusCatchesBrokenEvaluators runs the corpus against evaluators
// with one defect each and requires the kit to notice every defect.
func TestCorpusCatchesBrokenEvaluators(t *testing.T) {
	data := querytest.Dataset()
	good := corpusCollection(data)
	withPlanner := func(change func(*query.Planner)) query.Collection {
		c := good
		change(&c.Planner)
		return c
	}
	mutants := []struct {
		name string
		ev   querytest.Evaluator
	}{
		{"days in UTC", withPlanner(func(p *query.Planner) { p.Location = time.UTC })},
		{"clock one day late", withPlanner(func(p *query.Planner) {
			p.Now = func() time.Time { return data.Now.Add(24 * time.Hour) }
		})},
		{"deleted not excluded", withPlanner(func(p *query.Planner) { p.Fields.Deleted = "nothing" })},
		{"guards off", withPlanner(func(p *query.Planner) {
			p.Limits = query.Limits{MaxListSize: -1, MaxPageSize: -1, MaxPageWindow: -1, MaxConditionNodes: -1,
				MaxConditionValues: -1, MaxSortFields: -1, MaxProjectionFields: -1}
		})},
		{"smaller default page", withPlanner(func(p *query.Planner) { p.Limits.DefaultPageSize = 5 })},
		{"tenant scoped", withPlanner(func(p *query.Planner) { p.Tenant = "t1" })},
		{"wrong id field", withPlanner(func(p *query.Planner) { p.Fields.ID = "eventId" })},
		{"reversed order", reversed{good}},
		{"single never missing", alwaysFound{good}},
		{"missing document", query.Collection{Planner: good.Planner, Documents: data.Documents[1:]}},
	}
	for _, m := range mutants {
		t.Run(m.name, func(t *testing.T) {
			failed := 0
			for _, c := range querytest.Cases() {
				if querytest.Check(context.Background(), m.ev, c) != nil {
					failed++
				}
			}
			if failed == 0 {
				t.Errorf("the corpus passes an evaluator with the defect %q", m.name)
			}
			t.Logf("%d cases caught %q", failed, m.name)
		})
	}
}

func TestCollectionHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := corpusCollection(querytest.Dataset())
	if _, err := c.List(ctx, query.Query{}); !errors.Is(err, context.Canceled) {
		t.Errorf("List: %v, want context.Canceled", err)
	}
	if _, err := c.Single(ctx, query.Query{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Single: %v, want context.Canceled", err)
	}
	if _, err := c.Paged(ctx, query.PagedQuery{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Paged: %v, want context.Canceled", err)
	}
	if _, err := c.Count(ctx, query.All()); !errors.Is(err, context.Canceled) {
		t.Errorf("Count: %v, want context.Canceled", err)
	}
}

func TestCollectionResultsAreCopies(t *testing.T) {
	data := querytest.Dataset()
	c := corpusCollection(data)
	docs, err := c.List(context.Background(), query.Query{Condition: query.ID("d01")})
	if err != nil || len(docs) != 1 {
		t.Fatalf("List = %v, %v", docs, err)
	}
	docs[0]["state"].(map[string]any)["name"] = "changed"
	docs[0]["state"].(map[string]any)["tags"].([]any)[0] = "changed"
	again, _ := c.List(context.Background(), query.Query{Condition: query.ID("d01")})
	if v, _ := again[0].Lookup("state.name"); v != "Alpha" {
		t.Errorf("changing a result changed the stored document: name %v", v)
	}
	if v, _ := again[0].Lookup("state.tags"); v.([]any)[0] != "red" {
		t.Errorf("changing a result changed the stored document: tags %v", v)
	}
}
