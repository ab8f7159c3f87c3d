package snapshot

import (
	"context"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
)

// Store keeps the latest snapshot of each aggregate. Saves are
// version-guarded inside the store's own atomic write (a lock, one SQL
// statement), never by reading first in Go: a lower version never
// overwrites a higher one, an equal version overwrites (a repair), a
// higher one replaces. Implementations are safe for concurrent use; the
// contract kit in package snapshottest checks every rule.
type Store interface {
	// Save stores s unless the store holds a higher version of the same
	// aggregate, and reports whether it stored it. It refuses an invalid
	// snapshot (IllegalArgument) and one naming another tenant than the
	// stored snapshot of the aggregate (TenantMismatch). It keeps times to
	// the millisecond and does not retain s.State.
	Save(ctx context.Context, s Snapshot) (bool, error)
	// Load returns the latest snapshot of the aggregate: NotFound when
	// there is none, TenantMismatch when it belongs to another tenant than
	// id names (an empty tenant is factum.DefaultTenant).
	Load(ctx context.Context, id factum.AggregateID) (Snapshot, error)
}

// Querier is implemented by stores that answer queries over the snapshots
// of one aggregate type. It runs Plans made by a query.Planner, with the
// semantics of package query; the query service builds the plans and
// applies projections, so a Querier returns whole snapshots.
type Querier interface {
	// Find returns the snapshots of the aggregate type matching
	// plan.Condition, ordered by plan.Sort, skipping plan.Offset and
	// returning at most plan.Limit. It ignores plan.Projection.
	Find(ctx context.Context, named factum.NamedAggregate, plan query.Plan) ([]Snapshot, error)
	// Count returns the number of snapshots of the aggregate type matching
	// the core condition.
	Count(ctx context.Context, named factum.NamedAggregate, cond query.Condition) (int64, error)
}

// QueryStore is a Store that answers queries.
type QueryStore interface {
	Store
	Querier
}
