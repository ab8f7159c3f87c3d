package event

import (
	"context"

	"github.com/factum-go/factum"
)

// maxTenantContexts bounds a lane's cache of contexts per tenant: past it
// the cache starts again, so that a log of many tenants costs a few
// contexts made again rather than memory without end.
const maxTenantContexts = 64

// tenantContexts holds one base context carrying each tenant a lane met,
// so that a delivery gets its stream's tenant without a context made per
// stream (a context and the tenant boxed: two allocations). The contexts
// are base's: a new base starts the cache again.
type tenantContexts struct {
	base context.Context
	m    map[string]context.Context
}

// get returns base carrying tenant.
func (t *tenantContexts) get(base context.Context, tenant string) context.Context {
	if t.base != base {
		clear(t.m)
		t.base = base
	}
	if c, ok := t.m[tenant]; ok {
		return c
	}
	if t.m == nil {
		t.m = make(map[string]context.Context)
	} else if len(t.m) >= maxTenantContexts {
		clear(t.m)
	}
	c := factum.ContextWithTenant(base, tenant)
	t.m[tenant] = c
	return c
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
