package event

import (
	"context"

	"github.com/factum-go/factum"
)

// maxTenantLanes bounds a lane's contexts per tenant: past it the lane
// starts again, so that a log of many tenants costs a few contexts made
// again rather than memory without end.
const maxTenantLanes = 64

// tenantLane is a consumer lane's contexts for one tenant's streams: the
// lane's contexts carrying the tenant, made once rather than per stream (a
// context and the tenant boxed: two allocations each).
type tenantLane struct {
	tenant string // whose streams these contexts serve
	// outer is the lane's parent carrying the tenant, then the lane's
	// results on top, where Retry and Timeout look for them.
	outer   context.Context
	base    context.Context // the lane's resCtx that boundTo was made for
	boundTo context.Context // base carrying the tenant
}

// tenantLane returns the lane's contexts for tenant, made at its first
// stream.
func (d *attemptDeadlines) tenantLane(tenant string) *tenantLane {
	if tl := d.tenants[tenant]; tl != nil {
		return tl
	}
	if d.tenants == nil {
		d.tenants = make(map[string]*tenantLane)
	} else if len(d.tenants) >= maxTenantLanes {
		clear(d.tenants)
	}
	tl := &tenantLane{tenant: tenant, outer: context.WithValue(factum.ContextWithTenant(d.parent, tenant), resultKey{}, d.res)}
	d.tenants[tenant] = tl
	return tl
}

// bounded returns base, the lane's context bounding an attempt, carrying
// the tenant on top, where the function's chain looks for it.
func (tl *tenantLane) bounded(base context.Context) context.Context {
	if tl.base != base {
		tl.boundTo = factum.ContextWithTenant(base, tl.tenant)
		tl.base = base
	}
	return tl.boundTo
}

// withTenant returns f run with its stream's tenant in its context
// (factum.ContextWithTenant), whatever the middleware outside did with the
// context: an event function sees the tenant of the stream it is given.
// The consumer's contexts carry the tenant already, so on a live delivery
// it only checks.
func withTenant(f StreamFunc) StreamFunc {
	return func(ctx context.Context, s *factum.EventStream) error {
		return f(factum.ContextWithTenant(ctx, s.AggregateID.TenantOrDefault()), s)
	}
}
