package factum

import "context"

type tenantContextKey struct{}

// ContextWithTenant returns a copy of ctx that carries the tenant a call
// acts in. The HTTP API sets it for every request (from the path today,
// from the caller's credential once one is required), and components that
// must scope what they keep by tenant, such as the Idempotency-Key
// middleware, read it with TenantFromContext instead of parsing requests
// themselves. An empty tenant means DefaultTenant.
func ContextWithTenant(ctx context.Context, tenant string) context.Context {
	if tenant == "" {
		tenant = DefaultTenant
	}
	return context.WithValue(ctx, tenantContextKey{}, tenant)
}

// TenantFromContext returns the tenant ContextWithTenant put in ctx, and
// whether there was one.
func TenantFromContext(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(tenantContextKey{}).(string)
	return t, ok
}
