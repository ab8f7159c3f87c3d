package factum_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
)

type otherKey struct{}

func TestContextWithTenant(t *testing.T) {
	acme := factum.ContextWithTenant(context.Background(), "acme")
	tests := []struct {
		name   string
		parent context.Context
		tenant string
		want   string
	}{
		{"empty means default", context.Background(), "", factum.DefaultTenant},
		{"default", context.Background(), factum.DefaultTenant, factum.DefaultTenant},
		{"named", context.Background(), "acme", "acme"},
		{"same again", acme, "acme", "acme"},
		{"another replaces", acme, "globex", "globex"},
		{"default replaces", acme, "", factum.DefaultTenant},
		{"named replaces default", factum.ContextWithTenant(context.Background(), ""), "acme", "acme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := context.WithValue(tt.parent, otherKey{}, "kept")
			ctx := factum.ContextWithTenant(parent, tt.tenant)
			got, ok := factum.TenantFromContext(ctx)
			if !ok || got != tt.want {
				t.Fatalf("TenantFromContext = %q, %v; want %q, true", got, ok, tt.want)
			}
			if v := ctx.Value(otherKey{}); v != "kept" {
				t.Fatalf("the parent's values are lost: %v", v)
			}
		})
	}
	if _, ok := factum.TenantFromContext(context.Background()); ok {
		t.Fatal("a context without a tenant reports one")
	}
}

// TestContextWithTenantAllocations pins the per-command cost: the default
// tenant is not boxed anew (only the context is allocated), and a tenant
// the context carries already costs nothing.
func TestContextWithTenantAllocations(t *testing.T) {
	bg := context.Background()
	acme := factum.ContextWithTenant(bg, "acme")
	def := factum.ContextWithTenant(bg, "")
	tests := []struct {
		name   string
		parent context.Context
		tenant string
		want   float64
	}{
		{"default", bg, factum.DefaultTenant, 1},
		{"empty", bg, "", 1},
		{"default carried", def, factum.DefaultTenant, 0},
		{"named carried", acme, "acme", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tenant := tt.tenant
			got := testing.AllocsPerRun(100, func() {
				_ = factum.ContextWithTenant(tt.parent, tenant)
			})
			if got != tt.want {
				t.Fatalf("ContextWithTenant allocates %v times, want %v", got, tt.want)
			}
		})
	}
}

func BenchmarkContextWithTenant(b *testing.B) {
	ctx := context.WithValue(context.Background(), otherKey{}, 1)
	for b.Loop() {
		_ = factum.ContextWithTenant(ctx, factum.DefaultTenant)
	}
}
