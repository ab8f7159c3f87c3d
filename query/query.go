package query

import (
	"strings"
)

// Direction is a sort direction.
type Direction string

// The sort directions. The empty Direction is ascending.
const (
	Asc  Direction = "ASC"
	Desc Direction = "DESC"
)

// Sort orders results by one field.
type Sort struct {
	// Field is the dotted field path to sort by.
	Field string `json:"field"`
	// Direction is Asc (the default) or Desc.
	Direction Direction `json:"direction,omitempty"`
}

// SortAsc returns an ascending sort on the field.
func SortAsc(path string) Sort { return Sort{Field: path, Direction: Asc} }

// SortDesc returns a descending sort on the field.
func SortDesc(path string) Sort { return Sort{Field: path, Direction: Desc} }

// Projection selects the fields of the documents a query returns. With
// Include, only the listed paths are kept (and the ID field, unless
// excluded); then every Exclude path is removed. Empty keeps everything.
type Projection struct {
	// Include lists the paths to keep.
	Include []string `json:"include,omitempty"`
	// Exclude lists the paths to remove.
	Exclude []string `json:"exclude,omitempty"`
}

// IsZero reports whether p keeps every field.
func (p Projection) IsZero() bool { return len(p.Include) == 0 && len(p.Exclude) == 0 }

// Pagination selects one page of results. Pages are 1-based.
type Pagination struct {
	// Index is the 1-based page number; 0 means 1.
	Index int `json:"index,omitempty"`
	// Size is the number of results per page; 0 means the Limits'
	// DefaultPageSize.
	Size int `json:"size,omitempty"`
}

// Query is a list query (and the form of a single query, whose Limit is
// ignored): which documents, which of their fields, in which order, and how
// many.
type Query struct {
	// Condition selects the documents; the zero Condition selects all.
	Condition Condition `json:"condition,omitzero"`
	// Projection selects the fields returned.
	Projection Projection `json:"projection,omitzero"`
	// Sort orders the results, first key first. Ties are always broken by
	// the document ID, ascending.
	Sort []Sort `json:"sort,omitempty"`
	// Limit is the maximum number of results; 0 means the Limits'
	// DefaultListSize.
	Limit int `json:"limit,omitempty"`
}

// PagedQuery is a query for one page of results and the total count.
type PagedQuery struct {
	// Condition selects the documents; the zero Condition selects all.
	Condition Condition `json:"condition,omitzero"`
	// Projection selects the fields returned.
	Projection Projection `json:"projection,omitzero"`
	// Sort orders the results, first key first. Ties are always broken by
	// the document ID, ascending.
	Sort []Sort `json:"sort,omitempty"`
	// Pagination selects the page.
	Pagination Pagination `json:"pagination,omitzero"`
}

// Paged is one page of results with the number of all matching documents.
type Paged[T any] struct {
	// Total is the number of documents matching the condition, on every
	// page.
	Total int64 `json:"total"`
	// List holds the page's results, in order.
	List []T `json:"list"`
}

// parseDirection returns the direction d names, ignoring case.
func parseDirection(d Direction) (Direction, bool) {
	switch Direction(strings.ToUpper(string(d))) {
	case "", Asc:
		return Asc, true
	case Desc:
		return Desc, true
	}
	return "", false
}
