package httpapi_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
)

func TestPrincipalOpen(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range []struct{ path, tenant string }{{"/principal", factum.DefaultTenant}, {"/tenant/acme/principal", "acme"}} {
		p := decode[httpapi.PrincipalInfo](t, f.do(t, "GET", tc.path, ""))
		if !p.Open || !p.Admin || p.Tenant != tc.tenant || p.Name != "" {
			t.Fatalf("%s on an open API: %+v", tc.path, p)
		}
	}
}

// The principal route answers who the credential is, in a tenant it
// holds; another tenant is the 404 of any unknown route, and a credential
// without the read role is 403.
func TestPrincipalWithCredentials(t *testing.T) {
	const keySend = "fk_send-only-0123456789abcdefghijklmn"
	a := authenticator(t,
		"support "+auth.HashKey(keyAcme)+" tenants=globex,acme roles=read,operator",
		"bot "+auth.HashKey(keySend)+" tenants=acme roles=send",
		"root "+auth.HashKey(keyAdmin)+" roles=admin",
	)
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) { h.Access.Authenticator = a })

	p := decode[httpapi.PrincipalInfo](t, f.do(t, "GET", "/tenant/globex/principal", "", withKey(keyAcme)...))
	if p.Open || p.Admin || p.Name != "support" || p.Method != auth.MethodAPIKey || p.Tenant != "globex" ||
		!slices.Equal(p.Tenants, []string{"acme", "globex"}) || !slices.Equal(p.Roles, []auth.Role{auth.RoleRead, auth.RoleOperator}) {
		t.Fatalf("support in globex: %+v", p)
	}
	root := decode[httpapi.PrincipalInfo](t, f.do(t, "GET", "/tenant/anything/principal", "", withKey(keyAdmin)...))
	if !root.Admin || root.Tenant != "anything" || root.Name != "root" {
		t.Fatalf("admin: %+v", root)
	}

	other := f.do(t, "GET", "/tenant/initech/principal", "", withKey(keyAcme)...)
	unknown := f.do(t, "GET", "/tenant/initech/no/such/route/here", "", withKey(keyAcme)...)
	wantError(t, other, http.StatusNotFound, factum.CodeNotFound)
	if string(other.body) != string(unknown.body) {
		t.Fatalf("a tenant not held answers %s, an unknown route in it %s: they must be the same", other.body, unknown.body)
	}
	wantError(t, f.do(t, "GET", "/principal", "", withKey(keySend)...), http.StatusForbidden, factum.CodeForbidden)
	wantError(t, f.do(t, "GET", "/principal", ""), http.StatusUnauthorized, factum.CodeUnauthorized)
}

// GET /principal answers a principal whatever tenants it holds: one that
// holds several, none of them default, acts in no tenant without a prefix
// and learns its tenants, while every other route without a prefix still
// acts in default, which it does not hold.
func TestPrincipalOfSeveralTenants(t *testing.T) {
	const keyBoth = "fk_both-default-0123456789abcdefghijklm"
	a := authenticator(t,
		"support "+auth.HashKey(keyAcme)+" tenants=acme,globex roles=read,operator",
		"both "+auth.HashKey(keyBoth)+" tenants=acme,default roles=read",
		"root "+auth.HashKey(keyAdmin)+" roles=admin",
		"sender "+auth.HashKey(keyGlobex)+" tenants=acme,globex roles=send",
	)
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) { h.Access.Authenticator = a })

	for _, tc := range []struct {
		name, key, path, tenant string
		tenants                 []string
	}{
		{"several tenants, no prefix", keyAcme, "/principal", "", []string{"acme", "globex"}},
		{"several tenants, a held prefix", keyAcme, "/tenant/acme/principal", "acme", []string{"acme", "globex"}},
		{"several tenants with default", keyBoth, "/principal", factum.DefaultTenant, []string{"acme", factum.DefaultTenant}},
		{"admin", keyAdmin, "/principal", factum.DefaultTenant, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, "GET", tc.path, "", withKey(tc.key)...)
			wantOK(t, r)
			p := decode[httpapi.PrincipalInfo](t, r)
			if p.Open || p.Tenant != tc.tenant || !slices.Equal(p.Tenants, tc.tenants) {
				t.Fatalf("GET %s: %+v, want tenant %q and tenants %v", tc.path, p, tc.tenant, tc.tenants)
			}
		})
	}

	// The route still needs the read role.
	wantError(t, f.do(t, "GET", "/principal", "", withKey(keyGlobex)...), http.StatusForbidden, factum.CodeForbidden)

	// Nothing else opens to it: a tenant it does not hold, named or not,
	// is the 404 of an unknown route.
	unknown := f.do(t, "GET", "/tenant/nobody/no/such/route/here", "", withKey(keyAcme)...)
	for _, path := range []string{"/tenant/default/principal", "/cart/c-1/state", "/no/such/route/here"} {
		r := f.do(t, "GET", path, "", withKey(keyAcme)...)
		wantError(t, r, http.StatusNotFound, factum.CodeNotFound)
		if string(r.body) != string(unknown.body) {
			t.Fatalf("GET %s answers %s, an unknown route %s: they must be the same", path, r.body, unknown.body)
		}
	}
}

// A request acting in no tenant spends the budget of a tenant its
// principal holds, never default's, which it cannot reach.
func TestPrincipalOfSeveralTenantsRateLimit(t *testing.T) {
	a := authenticator(t,
		"support "+auth.HashKey(keyAcme)+" tenants=globex,acme roles=read",
		"root "+auth.HashKey(keyAdmin)+" roles=admin",
	)
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) {
		h.Access.Authenticator = a
		h.Access.RateLimit = httpapi.RateLimit{PerSecond: 1e-6, Burst: 2}
	})
	for range 2 {
		wantOK(t, f.do(t, "GET", "/principal", "", withKey(keyAcme)...))
	}
	wantError(t, f.do(t, "GET", "/principal", "", withKey(keyAcme)...), http.StatusTooManyRequests, factum.CodeTooManyRequests)
	wantError(t, f.do(t, "GET", "/tenant/acme/principal", "", withKey(keyAcme)...), http.StatusTooManyRequests, factum.CodeTooManyRequests)
	wantOK(t, f.do(t, "GET", "/tenant/globex/principal", "", withKey(keyAcme)...))
	wantOK(t, f.do(t, "GET", "/principal", "", withKey(keyAdmin)...))
}
