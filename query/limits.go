package query

import (
	"github.com/factum-go/factum"
)

// Limits are the guards a Planner applies to every query. They are on by
// default: a zero field takes the default value below. A negative Max
// field turns that guard off; do that only for trusted, internal callers.
// A query beyond a guard is refused with an IllegalArgument error naming
// the guard, never truncated silently.
type Limits struct {
	// MaxListSize bounds a list query's Limit (default 1000).
	MaxListSize int
	// DefaultListSize is the Limit of a list query that gives none
	// (default 100, never above MaxListSize).
	DefaultListSize int
	// MaxPageSize bounds a paged query's page size (default 200).
	MaxPageSize int
	// DefaultPageSize is the size of a page that gives none (default 10,
	// never above MaxPageSize).
	DefaultPageSize int
	// MaxPageWindow bounds how deep a paged query may read: index × size,
	// the position of the page's last result (default 10,000). Deep pages
	// cost the backend every skipped row.
	MaxPageWindow int
	// MaxConditionNodes bounds the number of nodes in a condition tree,
	// every child counted (default 128).
	MaxConditionNodes int
	// MaxConditionValues bounds the number of values in a condition tree:
	// one per scalar, one per element of a list (default 1000).
	MaxConditionValues int
	// MaxSortFields bounds the number of sort keys (default 8).
	MaxSortFields int
	// MaxProjectionFields bounds the number of include plus exclude paths
	// (default 64).
	MaxProjectionFields int
}

// The default limits.
const (
	DefaultMaxListSize         = 1000
	DefaultDefaultListSize     = 100
	DefaultMaxPageSize         = 200
	DefaultDefaultPageSize     = 10
	DefaultMaxPageWindow       = 10_000
	DefaultMaxConditionNodes   = 128
	DefaultMaxConditionValues  = 1000
	DefaultMaxSortFields       = 8
	DefaultMaxProjectionFields = 64
)

// DefaultLimits returns the limits a zero Limits stands for.
func DefaultLimits() Limits { return Limits{}.resolved() }

// resolved fills zero fields with their defaults.
func (l Limits) resolved() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.MaxListSize, DefaultMaxListSize)
	def(&l.MaxPageSize, DefaultMaxPageSize)
	def(&l.MaxPageWindow, DefaultMaxPageWindow)
	def(&l.MaxConditionNodes, DefaultMaxConditionNodes)
	def(&l.MaxConditionValues, DefaultMaxConditionValues)
	def(&l.MaxSortFields, DefaultMaxSortFields)
	def(&l.MaxProjectionFields, DefaultMaxProjectionFields)
	if l.DefaultListSize <= 0 {
		l.DefaultListSize = DefaultDefaultListSize
	}
	if l.MaxListSize > 0 && l.DefaultListSize > l.MaxListSize {
		l.DefaultListSize = l.MaxListSize
	}
	if l.DefaultPageSize <= 0 {
		l.DefaultPageSize = DefaultDefaultPageSize
	}
	if l.MaxPageSize > 0 && l.DefaultPageSize > l.MaxPageSize {
		l.DefaultPageSize = l.MaxPageSize
	}
	return l
}

// exceeds reports whether n is beyond the guard max (a negative max is no
// guard).
func exceeds(n, max int) bool { return max >= 0 && n > max }

func illegal(msg string) *factum.Error { return factum.IllegalArgument("query: " + msg) }

func notFound() *factum.Error { return factum.NotFound("query: no document matches") }
