package querytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/factum-go/factum/internal/kit"
	"github.com/factum-go/factum/query"
)

// Evaluator answers queries over the kit's data set. An implementation
// plans every query with a query.Planner whose clock returns Data.Now and
// whose location is Data.Location (default limits and fields), and returns
// the projected documents.
type Evaluator interface {
	// Single returns the first result, or a NotFound error.
	Single(ctx context.Context, q query.Query) (query.Document, error)
	// List returns the results.
	List(ctx context.Context, q query.Query) ([]query.Document, error)
	// Paged returns one page of results and the total.
	Paged(ctx context.Context, q query.PagedQuery) (query.Paged[query.Document], error)
	// Count returns the number of matching documents.
	Count(ctx context.Context, c query.Condition) (int64, error)
}

// NewEvaluator returns an evaluator holding exactly the documents of data
// (and nothing else). Register clean-up with t.Cleanup.
type NewEvaluator func(t *testing.T, data Data) Evaluator

// Run runs the whole corpus against one evaluator that newEvaluator
// returns, one subtest per case.
func Run(t *testing.T, newEvaluator NewEvaluator) {
	t.Helper()
	ev := newEvaluator(t, Dataset())
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) { RunCase(t, ev, c) })
	}
}

// RunCase runs one case against ev and fails t unless ev answers as the
// case expects.
func RunCase(t *testing.T, ev Evaluator, c Case) {
	t.Helper()
	if err := Check(context.Background(), ev, c); err != nil {
		t.Error(err)
	}
}

// Check runs one case against ev and describes how the answer differs
// from the case's expectation, or returns nil.
func Check(ctx context.Context, ev Evaluator, c Case) error {
	var (
		docs  []query.Document
		total int64
		err   error
	)
	switch c.Kind {
	case KindList:
		docs, err = ev.List(ctx, c.Query)
	case KindSingle:
		var d query.Document
		if d, err = ev.Single(ctx, c.Query); err == nil {
			docs = []query.Document{d}
		}
	case KindPaged:
		var p query.Paged[query.Document]
		if p, err = ev.Paged(ctx, c.Paged); err == nil {
			docs, total = p.List, p.Total
			if p.List == nil {
				return errors.New("the page list is nil; want an empty list")
			}
		}
	case KindCount:
		total, err = ev.Count(ctx, c.Condition)
	default:
		return fmt.Errorf("case %q has no kind", c.Name)
	}
	if c.Err != "" {
		return kit.CodeMismatch(err, c.Err)
	}
	if err != nil {
		return fmt.Errorf("%s: unexpected error: %w", c.Kind, err)
	}
	if (c.Kind == KindPaged || c.Kind == KindCount) && total != c.Total {
		return fmt.Errorf("total = %d, want %d", total, c.Total)
	}
	if c.Kind == KindCount {
		return nil
	}
	if c.Documents != nil {
		return sameDocuments(docs, c.Documents)
	}
	got := make([]string, len(docs))
	for i, d := range docs {
		id, _ := d["aggregateId"].(string)
		got[i] = id
	}
	if !slices.Equal(got, c.IDs) {
		return fmt.Errorf("IDs = %v\nwant  %v", got, c.IDs)
	}
	return nil
}

// sameDocuments compares documents by JSON value.
func sameDocuments(got []query.Document, want []string) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d documents, want %d: %s", len(got), len(want), jsonOf(got))
	}
	for i := range want {
		var w any
		if err := json.Unmarshal([]byte(want[i]), &w); err != nil {
			return fmt.Errorf("case document %d is not JSON: %v", i, err)
		}
		b, err := json.Marshal(got[i])
		if err != nil {
			return fmt.Errorf("document %d does not encode: %v", i, err)
		}
		var g any
		if err := json.Unmarshal(b, &g); err != nil {
			return fmt.Errorf("document %d does not decode: %v", i, err)
		}
		if !reflect.DeepEqual(g, w) {
			return fmt.Errorf("document %d = %s\nwant         %s", i, b, want[i])
		}
	}
	return nil
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
