package querytest

import (
	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// Kind says which query method a case calls.
type Kind int

// The kinds of case.
const (
	// KindList calls List with Case.Query.
	KindList Kind = iota + 1
	// KindPaged calls Paged with Case.Paged.
	KindPaged
	// KindCount calls Count with Case.Condition.
	KindCount
	// KindSingle calls Single with Case.Query.
	KindSingle
)

// String names the kind after the method it calls.
func (k Kind) String() string {
	switch k {
	case KindList:
		return "List"
	case KindPaged:
		return "Paged"
	case KindCount:
		return "Count"
	case KindSingle:
		return "Single"
	}
	return "Kind(?)"
}

// Case is one query of the corpus and what every evaluator must answer.
type Case struct {
	// Name is unique in the corpus.
	Name string
	// Kind selects the method and which of the next three fields is used.
	Kind Kind
	// Query is the query of a List or Single case.
	Query query.Query
	// Paged is the query of a Paged case.
	Paged query.PagedQuery
	// Condition is the condition of a Count case.
	Condition query.Condition
	// IDs are the expected aggregate IDs, in order (List, Paged, Single).
	IDs []string
	// Total is the expected total (Paged) or count (Count).
	Total int64
	// Documents, when set, are the expected results in full as JSON (for
	// projections), compared by JSON value.
	Documents []string
	// Err, when set, is the code of the error the call must return
	// (IllegalArgument for a refused query, NotFound for a Single without
	// a result); the other expectations are then unused.
	Err factum.Code
}

func where(c query.Condition) query.Query { return query.Query{Condition: c} }

func list(name string, q query.Query, ids ...string) Case {
	return Case{Name: name, Kind: KindList, Query: q, IDs: nonNil(ids)}
}

func paged(name string, q query.PagedQuery, total int64, ids ...string) Case {
	return Case{Name: name, Kind: KindPaged, Paged: q, Total: total, IDs: nonNil(ids)}
}

func count(name string, c query.Condition, n int64) Case {
	return Case{Name: name, Kind: KindCount, Condition: c, Total: n}
}

func single(name string, q query.Query, id string) Case {
	c := Case{Name: name, Kind: KindSingle, Query: q, IDs: []string{id}}
	if id == "" {
		c.IDs, c.Err = nil, factum.CodeNotFound
	}
	return c
}

func refused(c Case) Case {
	c.IDs, c.Err = nil, factum.CodeIllegalArgument
	return c
}

func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// active lists every document that is not deleted, in ID order.
func active() []string {
	return []string{"d01", "d02", "d03", "d04", "d05", "d06", "d07", "d08", "d09", "d10",
		"d11", "d12", "d13", "d14", "d15", "d16", "d19", "d20"}
}

// Cases returns the corpus: every operator, projection, sort, pagination
// and guard, with the results the kit's data set must give. The slice is
// fresh on every call.
func Cases() []Case {
	var cs []Case
	for _, group := range [][]Case{
		logicCases(), identityCases(), comparisonCases(), setCases(), stringCases(),
		presenceCases(), dateCases(), sortCases(), pageCases(), projectionCases(),
		guardCases(),
	} {
		cs = append(cs, group...)
	}
	return cs
}
