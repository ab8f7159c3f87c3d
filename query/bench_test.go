package query_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/factum-go/factum/query"
)

// benchDocs builds n snapshot-shaped documents of an order aggregate.
func benchDocs(n int) []query.Document {
	statuses := []string{"open", "paid", "shipped", "cancelled"}
	customers := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace"}
	docs := make([]query.Document, n)
	for i := range docs {
		docs[i] = query.Document{
			"aggregateId": fmt.Sprintf("order-%06d", i),
			"tenantId":    "t1",
			"ownerId":     customers[i%len(customers)],
			"version":     float64(1 + i%9),
			"deleted":     i%50 == 0,
			"eventTime":   float64(1_770_000_000_000 + int64(i)*60_000),
			"state": map[string]any{
				"status":   statuses[i%len(statuses)],
				"total":    float64((i * 7919) % 1000),
				"customer": customers[(i/3)%len(customers)],
				"lines":    []any{map[string]any{"sku": fmt.Sprintf("sku-%d", i%97), "qty": float64(1 + i%5)}},
			},
		}
	}
	return docs
}

// benchQuery is a list query with a three-clause condition and a sort.
func benchQuery(limit int) query.Query {
	return query.Query{
		Condition: query.And(
			query.Eq("state.status", "open"),
			query.Gt("state.total", 100),
			query.Contains("state.customer", "a"),
		),
		Sort:  []query.Sort{query.SortDesc("state.total")},
		Limit: limit,
	}
}

func benchmarkList(b *testing.B, limit int) {
	c := query.Collection{Documents: benchDocs(10_000)}
	q := benchQuery(limit)
	ctx := context.Background()
	docs, err := c.List(ctx, q)
	if err != nil || len(docs) == 0 {
		b.Fatalf("List: %d documents, %v", len(docs), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.List(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCollectionList10k: 10,000 documents, AND of EQ, GT and
// CONTAINS (about 1,600 match), sorted by a number descending, first 20.
func BenchmarkCollectionList10k(b *testing.B) { benchmarkList(b, 20) }

// BenchmarkCollectionList10kLimit1000 is the same query returning 1,000
// results, which sorts every match.
func BenchmarkCollectionList10kLimit1000(b *testing.B) { benchmarkList(b, 1000) }

// BenchmarkCount10k counts the same condition's matches.
func BenchmarkCount10k(b *testing.B) {
	c := query.Collection{Documents: benchDocs(10_000)}
	cond := benchQuery(0).Condition
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Count(ctx, cond); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlan measures planning alone: checking and lowering the query.
func BenchmarkPlan(b *testing.B) {
	p := query.Planner{}
	q := benchQuery(20)
	q.Condition = query.And(q.Condition, query.ThisWeek("eventTime"), query.In("ownerId", "alice", "bob"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.List(q); err != nil {
			b.Fatal(err)
		}
	}
}
