package query

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Rank is the place of a JSON type in the sort order. Ascending sorts put
// lower ranks first; descending sorts reverse the whole order, ranks
// included. Values of equal rank compare by value (numbers numerically,
// strings byte-wise); arrays and objects all compare equal, and the next
// sort key decides.
type Rank uint8

// The ranks, in ascending order.
const (
	RankMissing Rank = iota
	RankNull
	RankFalse
	RankTrue
	RankNumber
	RankString
	RankComposite // arrays and objects
)

// sortKey is one document's value for one sort field.
type sortKey struct {
	rank Rank
	num  float64
	str  string
}

func keyOf(v any, present bool) sortKey {
	if !present {
		return sortKey{rank: RankMissing}
	}
	switch x := v.(type) {
	case nil:
		return sortKey{rank: RankNull}
	case bool:
		if x {
			return sortKey{rank: RankTrue}
		}
		return sortKey{rank: RankFalse}
	case string:
		return sortKey{rank: RankString, str: x}
	}
	if f, ok := number(v); ok {
		return sortKey{rank: RankNumber, num: f}
	}
	return sortKey{rank: RankComposite}
}

func compareKeys(a, b sortKey) int {
	if c := cmp.Compare(a.rank, b.rank); c != 0 {
		return c
	}
	switch a.rank {
	case RankNumber:
		return cmp.Compare(a.num, b.num)
	case RankString:
		return strings.Compare(a.str, b.str)
	}
	return 0
}

// Select runs plan over docs in memory: it returns the positions in docs of
// the plan's page of results, in order, and the number of all matching
// documents. It does not apply the projection (see Execute). It fails only
// on a malformed plan.
func Select(plan Plan, docs []Document) ([]int, int, error) {
	m, err := Compile(plan.Condition)
	if err != nil {
		return nil, 0, err
	}
	if plan.Offset < 0 || plan.Limit < 0 {
		return nil, 0, illegal(fmt.Sprintf("plan window offset %d limit %d is negative", plan.Offset, plan.Limit))
	}
	var matched []int
	for i, d := range docs {
		if m.fn(map[string]any(d)) {
			matched = append(matched, i)
		}
	}
	total := len(matched)
	if plan.Offset >= total || plan.Limit == 0 {
		return []int{}, total, nil
	}
	order, err := sortPositions(plan.Sort, docs, matched, plan.Offset+plan.Limit)
	if err != nil {
		return nil, 0, err
	}
	end := min(plan.Offset+plan.Limit, len(order))
	return order[plan.Offset:end], total, nil
}

// sortPositions orders the matched positions by the sort keys and returns
// at least the first need of them in order.
func sortPositions(sorts []Sort, docs []Document, matched []int, need int) ([]int, error) {
	n, k := len(matched), len(sorts)
	if k == 0 {
		return matched, nil
	}
	desc := make([]bool, k)
	gets := make([]func(any) (any, bool), k)
	for j, s := range sorts {
		d, err := checkSort(j, s)
		if err != nil {
			return nil, err
		}
		desc[j] = d == Desc
		gets[j] = getter(s.Field)
	}
	// Keys are read once per document, not once per comparison.
	keys := make([]sortKey, n*k)
	for i, p := range matched {
		root := map[string]any(docs[p])
		for j, g := range gets {
			v, ok := g(root)
			keys[i*k+j] = keyOf(v, ok)
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	less := func(a, b int) int {
		ka, kb := keys[a*k:a*k+k], keys[b*k:b*k+k]
		for j := range k {
			c := compareKeys(ka[j], kb[j])
			if desc[j] {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		// Equal keys keep input order; with the ID as last key this only
		// happens for duplicate IDs.
		return cmp.Compare(a, b)
	}
	if need < n/8 {
		idx = smallest(idx, need, less)
	} else {
		slices.SortFunc(idx, less)
	}
	out := make([]int, len(idx))
	for i, x := range idx {
		out[i] = matched[x]
	}
	return out, nil
}

// smallest returns the need smallest elements of idx in order, using a
// bounded max-heap: O(n log need) instead of sorting everything.
func smallest(idx []int, need int, compare func(a, b int) int) []int {
	if need <= 0 {
		return nil
	}
	heap := make([]int, 0, need)
	down := func(i int) {
		for {
			l, r, big := 2*i+1, 2*i+2, i
			if l < len(heap) && compare(heap[l], heap[big]) > 0 {
				big = l
			}
			if r < len(heap) && compare(heap[r], heap[big]) > 0 {
				big = r
			}
			if big == i {
				return
			}
			heap[i], heap[big] = heap[big], heap[i]
			i = big
		}
	}
	for _, x := range idx {
		if len(heap) < need {
			heap = append(heap, x)
			for i := len(heap) - 1; i > 0; {
				parent := (i - 1) / 2
				if compare(heap[i], heap[parent]) <= 0 {
					break
				}
				heap[i], heap[parent] = heap[parent], heap[i]
				i = parent
			}
			continue
		}
		if compare(x, heap[0]) < 0 {
			heap[0] = x
			down(0)
		}
	}
	slices.SortFunc(heap, compare)
	return heap
}

// Execute runs plan over docs in memory and returns the page of results,
// projected (deep copies: changing them never changes docs), with the
// number of all matching documents.
func Execute(plan Plan, docs []Document) ([]Document, int, error) {
	pos, total, err := Select(plan, docs)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Document, len(pos))
	for i, p := range pos {
		out[i] = plan.Projection.Apply(docs[p])
	}
	return out, total, nil
}

// Count returns the number of docs matching a core condition.
func Count(c Condition, docs []Document) (int, error) {
	m, err := Compile(c)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range docs {
		if m.fn(map[string]any(d)) {
			n++
		}
	}
	return n, nil
}
