package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/auth"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
)

// The API keys of the access tests, and their key file.
const (
	keyAcme     = "fk_acme-all-0123456789abcdefghijklmnop"
	keyAcmeRead = "fk_acme-read-0123456789abcdefghijklmno"
	keyGlobex   = "fk_globex-0123456789abcdefghijklmnopqr"
	keyAdmin    = "fk_admin-0123456789abcdefghijklmnopqrs"
)

func testKeys(t testing.TB) *auth.Authenticator {
	t.Helper()
	return authenticator(t,
		"acme-all "+auth.HashKey(keyAcme)+" tenants=acme roles=send,read,operator",
		"acme-read "+auth.HashKey(keyAcmeRead)+" tenants=acme roles=read",
		"globex-all "+auth.HashKey(keyGlobex)+" tenants=globex roles=send,read,operator",
		"root "+auth.HashKey(keyAdmin)+" roles=admin",
	)
}

// authenticator returns an authenticator of the API keys of lines, one
// key a line in the key file's form.
func authenticator(t testing.TB, lines ...string) *auth.Authenticator {
	t.Helper()
	ks, err := auth.ParseKeys(strings.Join(lines, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(auth.Config{Keys: ks})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func accessFixture(t *testing.T, edit func(*httpapi.Config)) *fixture {
	t.Helper()
	return newFixture(t, func(_ *engine.Config, h *httpapi.Config) {
		h.Access.Authenticator = testKeys(t)
		if edit != nil {
			edit(h)
		}
	})
}

func withKey(key string) []string { return []string{auth.HeaderAPIKey, key} }

func TestAccessNeedsACredential(t *testing.T) {
	f := accessFixture(t, nil)
	for _, path := range []string{"/cart/c-1/state", "/tenant/acme/cart/c-1/state", "/no/such/route/at/all"} {
		r := f.do(t, "GET", path, "")
		wantError(t, r, http.StatusUnauthorized, factum.CodeUnauthorized)
		if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="factum"` {
			t.Fatalf("%s: WWW-Authenticate %q", path, got)
		}
	}
	r := f.do(t, "POST", "/cart/c-1/add_item", `{"sku":"sku-1","qty":1}`, "Authorization", "Bearer fk_not-a-key-at-all")
	wantError(t, r, http.StatusUnauthorized, factum.CodeUnauthorized)
	if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="factum", error="invalid_token"` {
		t.Fatalf("WWW-Authenticate %q", got)
	}
	if strings.Contains(string(r.body), "fk_not-a-key") {
		t.Fatalf("the presented key is echoed: %s", r.body)
	}
	for _, path := range []string{"/healthz", "/readyz", "/openapi.json"} {
		wantOK(t, f.do(t, "GET", path, ""))
	}
}

func TestAccessTenantComesFromTheCredential(t *testing.T) {
	f := accessFixture(t, nil)
	// Without a tenant prefix a one-tenant key acts in its tenant.
	r := f.do(t, "POST", "/cart/c-1/add_item", `{"sku":"sku-1","qty":1}`, withKey(keyAcme)...)
	wantOK(t, r)
	if !strings.Contains(string(r.body), `"tenant":"acme"`) {
		t.Fatalf("the command did not act in acme: %s", r.body)
	}
	wantOK(t, f.do(t, "GET", "/tenant/acme/cart/c-1/state", "", withKey(keyAcmeRead)...))
	wantOK(t, f.do(t, "GET", "/cart/c-1/state", "", withKey(keyAcmeRead)...))

	// A tenant the key does not hold is a plain 404, whether it exists or
	// not: the answer is the same as for a tenant nobody uses.
	exists := f.do(t, "GET", "/tenant/acme/cart/c-1/state", "", withKey(keyGlobex)...)
	wantError(t, exists, http.StatusNotFound, factum.CodeNotFound)
	missing := f.do(t, "GET", "/tenant/nobody/cart/c-1/state", "", withKey(keyGlobex)...)
	if string(exists.body) != string(missing.body) {
		t.Fatalf("an existing tenant answers %s, a missing one %s", exists.body, missing.body)
	}
	if strings.Contains(string(exists.body), "acme") {
		t.Fatalf("the body names the tenant: %s", exists.body)
	}
	// Even a send to another tenant's path is 404, and appends nothing.
	wantError(t, f.do(t, "POST", "/tenant/acme/cart/c-9/add_item", `{"sku":"sku-1","qty":1}`, withKey(keyGlobex)...), http.StatusNotFound, factum.CodeNotFound)
	wantError(t, f.do(t, "GET", "/tenant/acme/cart/c-9/state", "", withKey(keyAcme)...), http.StatusNotFound, factum.CodeNotFound)

	// An admin holds every tenant; without a prefix it acts in default.
	wantOK(t, f.do(t, "GET", "/tenant/acme/cart/c-1/state", "", withKey(keyAdmin)...))
	r = f.do(t, "POST", "/cart/c-2/add_item", `{"sku":"sku-1","qty":1}`, withKey(keyAdmin)...)
	wantOK(t, r)
	if !strings.Contains(string(r.body), `"tenant":"default"`) {
		t.Fatalf("the admin's command did not act in default: %s", r.body)
	}
}

func TestAccessRoles(t *testing.T) {
	f := accessFixture(t, nil)
	wantOK(t, f.do(t, "POST", "/cart/c-1/add_item", `{"sku":"sku-1","qty":1}`, withKey(keyAcme)...))
	tests := []struct {
		method, path, body string
	}{
		{"POST", "/cart/c-1/add_item", `{"sku":"sku-1","qty":1}`},
		{"DELETE", "/cart/c-1", ""},
		{"PUT", "/cart/c-1/recover", ""},
		{"POST", "/cart/add_item", `{"sku":"sku-1","qty":1}`},
	}
	for _, tt := range tests {
		r := f.do(t, tt.method, tt.path, tt.body, withKey(keyAcmeRead)...)
		e := wantError(t, r, http.StatusForbidden, factum.CodeForbidden)
		if !strings.Contains(e.Message, "send") {
			t.Fatalf("%s %s: message %q does not name the role", tt.method, tt.path, e.Message)
		}
	}
	wantOK(t, f.do(t, "GET", "/cart/c-1/event/1/1", "", withKey(keyAcmeRead)...))
}

// The principal is recorded in the command's header and so in its event
// stream; neither Command-Operator nor a header named like the key can
// set it.
func TestAccessRecordsThePrincipal(t *testing.T) {
	f := accessFixture(t, nil)
	wantOK(t, f.do(t, "POST", "/tenant/acme/cart/c-1/add_item", `{"sku":"sku-1","qty":1}`,
		auth.HeaderAPIKey, keyAcme, httpapi.HeaderOperator, "mallory", httpapi.HeaderPrincipal, "mallory", "Command-Header-"+httpapi.HeaderPrincipal, "mallory"))
	r := f.do(t, "GET", "/tenant/acme/cart/c-1/event/1/1", "", withKey(keyAcmeRead)...)
	wantOK(t, r)
	streams := decode[[]factum.EventStream](t, r)
	if len(streams) != 1 || streams[0].Header[httpapi.HeaderPrincipal] != "acme-all" {
		t.Fatalf("streams %s: want the principal acme-all in the header", r.body)
	}
	if strings.Contains(string(r.body), "mallory") {
		t.Fatalf("a forged principal reached the stream: %s", r.body)
	}
}

func TestAccessOpenWithoutAuthenticator(t *testing.T) {
	f := newFixture(t, nil)
	r := f.do(t, "POST", "/tenant/t1/cart/c-1/add_item", `{"sku":"sku-1","qty":1}`)
	wantOK(t, r)
	r = f.do(t, "GET", "/tenant/t1/cart/c-1/event/1/1", "")
	wantOK(t, r)
	if strings.Contains(string(r.body), httpapi.HeaderPrincipal) {
		t.Fatalf("an open API recorded a principal: %s", r.body)
	}
	var doc map[string]any
	if err := json.Unmarshal(f.do(t, "GET", "/openapi.json", "").body, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["security"]; ok {
		t.Fatal("an open API documents security requirements")
	}
}

func TestAccessRateLimitPerTenant(t *testing.T) {
	f := accessFixture(t, func(h *httpapi.Config) {
		h.Access.RateLimit = httpapi.RateLimit{PerSecond: 0.01, Burst: 3}
	})
	// Refused credentials spend no tenant's budget.
	for range 5 {
		wantError(t, f.do(t, "GET", "/tenant/acme/cart/c-1/state", "", auth.HeaderAPIKey, "wrong"), http.StatusUnauthorized, factum.CodeUnauthorized)
	}
	for i := range 3 {
		r := f.do(t, "GET", "/tenant/acme/cart/c-1/state", "", withKey(keyAcme)...)
		if r.status != http.StatusNotFound {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	r := f.do(t, "GET", "/tenant/acme/cart/c-1/state", "", withKey(keyAcmeRead)...)
	wantError(t, r, http.StatusTooManyRequests, factum.CodeTooManyRequests)
	if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n < 1 {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// Another tenant has its own bucket.
	if r := f.do(t, "GET", "/tenant/globex/cart/c-1/state", "", withKey(keyGlobex)...); r.status != http.StatusNotFound {
		t.Fatalf("globex: %d %s", r.status, r.body)
	}
	// Open routes are not limited.
	wantOK(t, f.do(t, "GET", "/healthz", ""))
}

// The OpenAPI document describes the schemes and holds no secret; neither
// do any of the answers to good and bad credentials.
func TestAccessSecretsStayOut(t *testing.T) {
	f := accessFixture(t, nil)
	doc := f.do(t, "GET", "/openapi.json", "")
	wantOK(t, doc)
	var d struct {
		Components struct {
			SecuritySchemes map[string]map[string]any `json:"securitySchemes"`
		} `json:"components"`
		Paths map[string]map[string]struct {
			Security *[]map[string][]string `json:"security"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc.body, &d); err != nil {
		t.Fatal(err)
	}
	if d.Components.SecuritySchemes["apiKey"]["name"] != auth.HeaderAPIKey || d.Components.SecuritySchemes["bearerJwt"]["scheme"] != "bearer" {
		t.Fatalf("schemes %v", d.Components.SecuritySchemes)
	}
	if s := d.Paths["/cart/{id}/state"]["get"].Security; s == nil || len(*s) != 2 {
		t.Fatalf("GET /cart/{id}/state security %v, want the key or the JWT", s)
	}
	if s := d.Paths["/healthz"]["get"].Security; s == nil || len(*s) != 0 {
		t.Fatalf("/healthz security %v, want []", s)
	}
	bodies := [][]byte{doc.body}
	for _, key := range []string{keyAcme, keyAcmeRead, keyAdmin, "fk_wrong-key-0123456789", ""} {
		for _, path := range []string{"/tenant/acme/cart/c-1/state", "/tenant/globex/cart/c-1/state", "/cart/c-1/add_item"} {
			r := f.do(t, "GET", path, "", "Authorization", "Bearer "+key)
			bodies = append(bodies, r.body, []byte(strings.Join(r.header.Values("WWW-Authenticate"), " ")))
		}
	}
	for _, b := range bodies {
		for _, secret := range []string{keyAcme, keyAcmeRead, keyGlobex, keyAdmin, "fk_wrong-key", auth.HashKey(keyAcme)[len(auth.HashPrefix):]} {
			if strings.Contains(string(b), secret) {
				t.Fatalf("a secret appears in %s", b)
			}
		}
	}
}

// Every route pattern the handler registers has a role decision; a
// pattern without one would need admin.
func TestAccessUndecidedRouteNeedsAdmin(t *testing.T) {
	f := accessFixture(t, nil)
	// PUT …/snapshot is decided (operator) but not registered without a
	// snapshot store: the 404 of no route needs only a credential.
	wantError(t, f.do(t, "PUT", "/cart/c-1/snapshot", "", withKey(keyAcmeRead)...), http.StatusNotFound, factum.CodeNotFound)
	wantError(t, f.do(t, "GET", "/no/such/route/here/at/all", "", withKey(keyAcmeRead)...), http.StatusNotFound, factum.CodeNotFound)
}

func TestAccessRefusesNegativeLimits(t *testing.T) {
	rt := newFixture(t, nil).rt
	for name, cfg := range map[string]httpapi.Config{
		"rate":        {Access: httpapi.AccessConfig{RateLimit: httpapi.RateLimit{PerSecond: -1}}},
		"burst":       {Access: httpapi.AccessConfig{RateLimit: httpapi.RateLimit{PerSecond: 1, Burst: -1}}},
		"streams":     {Streams: httpapi.StreamLimits{MaxStreams: -1}},
		"stream idle": {Streams: httpapi.StreamLimits{IdleTimeout: -time.Second}},
	} {
		cfg.Engine = rt
		if _, err := httpapi.New(cfg); !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s: %v, want IllegalArgument", name, err)
		}
	}
}
