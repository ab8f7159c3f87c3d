package query

import (
	"context"
)

// Collection answers queries over documents held in memory, planning each
// with its Planner. It is the reference evaluator the corpus in package
// querytest is written against. A Collection does not copy or change its
// Documents; results are deep copies. It is safe for concurrent use as
// long as nobody changes Documents meanwhile.
type Collection struct {
	// Planner plans every query: limits, fields, clock and location.
	Planner Planner
	// Documents are the documents queried.
	Documents []Document
}

// Single returns the first result of q in its order, or a NotFound error.
func (c Collection) Single(ctx context.Context, q Query) (Document, error) {
	docs, _, err := execute(ctx, c.Planner.Single, q, c.Documents)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, notFound()
	}
	return docs[0], nil
}

// List returns the results of q.
func (c Collection) List(ctx context.Context, q Query) ([]Document, error) {
	docs, _, err := execute(ctx, c.Planner.List, q, c.Documents)
	return docs, err
}

// Paged returns one page of the results of q and the number of all
// matching documents.
func (c Collection) Paged(ctx context.Context, q PagedQuery) (Paged[Document], error) {
	docs, total, err := execute(ctx, c.Planner.Paged, q, c.Documents)
	if err != nil {
		return Paged[Document]{}, err
	}
	return Paged[Document]{Total: int64(total), List: docs}, nil
}

// execute plans q with plan, unless ctx has ended, and runs the plan over
// docs (see Execute).
func execute[Q any](ctx context.Context, plan func(Q) (Plan, error), q Q, docs []Document) ([]Document, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	p, err := plan(q)
	if err != nil {
		return nil, 0, err
	}
	return Execute(p, docs)
}

// Count returns the number of documents matching cond.
func (c Collection) Count(ctx context.Context, cond Condition) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	lowered, err := c.Planner.Count(cond)
	if err != nil {
		return 0, err
	}
	n, err := Count(lowered, c.Documents)
	return int64(n), err
}
