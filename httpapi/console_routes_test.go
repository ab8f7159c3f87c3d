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
