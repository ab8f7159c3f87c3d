package snapshot

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// The generic fallbacks of the queries, over Backend.Scan alone. They
// answer exactly as the contract says (the in-memory evaluator of package
// query), and the kit holds every Finder to them.

// scanPage is how many snapshots the fallbacks read a time.
const scanPage = 1000

// documents returns every stored snapshot of the type and its query
// document (float64 numbers, for evaluation).
func documents(ctx context.Context, b Backend, named factum.NamedAggregate) ([]Snapshot, []query.Document, error) {
	var all []Snapshot
	var after string
	for {
		page, err := b.Scan(ctx, named, after, scanPage)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, page...)
		if len(page) < scanPage {
			break
		}
		after = page[len(page)-1].AggregateID.ID
	}
	docs := make([]query.Document, len(all))
	for i := range all {
		doc, err := all[i].document(false)
		if err != nil {
			return nil, nil, err
		}
		docs[i] = doc
	}
	return all, docs, nil
}

// find evaluates the plan over every snapshot of the type.
func find(ctx context.Context, b Backend, named factum.NamedAggregate, plan query.Plan) ([]Snapshot, error) {
	all, docs, err := documents(ctx, b, named)
	if err != nil {
		return nil, err
	}
	pos, _, err := query.Select(plan, docs)
	if err != nil {
		return nil, err
	}
	out := make([]Snapshot, len(pos))
	for i, p := range pos {
		out[i] = all[p]
	}
	return out, nil
}

// count evaluates the condition over every snapshot of the type.
func count(ctx context.Context, b Backend, named factum.NamedAggregate, cond query.Condition) (int64, error) {
	_, docs, err := documents(ctx, b, named)
	if err != nil {
		return 0, err
	}
	n, err := query.Count(cond, docs)
	return int64(n), err
}
