package factum

import "context"

type tenantContextKey struct{}

// ContextWithTenant returns a context that carries the tenant a call acts
// in: a copy of ctx, or ctx itself when it carries that tenant already.
// The HTTP API sets it for every request (from the path today, from the
// caller's credential once one is required), and components that must
// scope what they keep by tenant, such as the Idempotency-Key middleware,
// read it with TenantFromContext instead of parsing requests themselves.
// An empty tenant means DefaultTenant.
//
// It runs once per command, so it avoids boxing the tenant into an
// interface where it can: the default tenant is a constant (boxed once by
// the compiler), and a tenant ctx already carries needs no new context.
func ContextWithTenant(ctx context.Context, tenant string) context.Context {
	if tenant == "" || tenant == DefaultTenant {
		if t, _ := ctx.Value(tenantContextKey{}).(string); t == DefaultTenant {
			return ctx
		}
		return context.WithValue(ctx, tenantContextKey{}, DefaultTenant)
	}
	if t, _ := ctx.Value(tenantContextKey{}).(string); t == tenant {
		return ctx
	}
	return context.WithValue(ctx, tenantContextKey{}, tenant)
}

// TenantFromContext returns the tenant ContextWithTenant put in ctx, and
// whether there was one.
func TenantFromContext(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(tenantContextKey{}).(string)
	return t, ok
}
