package idempotency_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/idempotency"
)

// scopedServer runs a handler behind the middleware, with the tenant (and
// principal) of each request taken from the X-Test-Tenant and
// X-Test-Principal headers, set into the context as an API in front of
// the middleware does.
func scopedServer(t *testing.T, opts idempotency.MiddlewareOptions, h http.HandlerFunc) (*httptest.Server, *int) {
	t.Helper()
	_, mw := newMiddleware(t, idempotency.Policy{}, opts)
	calls := new(int)
	inner := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*calls++
		h(w, r)
	}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t := r.Header.Get("X-Test-Tenant"); t != "" {
			r = r.WithContext(factum.ContextWithTenant(r.Context(), t))
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, calls
}

func scopedDo(t *testing.T, srv *httptest.Server, tenant, principal, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+"/orders", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(idempotency.HeaderKey, key)
	if tenant != "" {
		req.Header.Set("X-Test-Tenant", tenant)
	}
	if principal != "" {
		req.Header.Set("X-Test-Principal", principal)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// By default keys are scoped by the tenant in the request's context: one
// tenant's key never replays to, blocks or conflicts with another tenant.
func TestMiddlewareKeysPerTenant(t *testing.T) {
	srv, calls := scopedServer(t, idempotency.MiddlewareOptions{}, created)
	if res := scopedDo(t, srv, "acme", "", "k-1", `{"a":1}`); res.StatusCode != http.StatusCreated {
		t.Fatalf("acme: %d", res.StatusCode)
	}
	// Same key and payload in another tenant: runs, not replayed.
	res := scopedDo(t, srv, "evil", "", "k-1", `{"a":1}`)
	if res.StatusCode != http.StatusCreated || res.Header.Get(idempotency.HeaderReplayed) != "" || *calls != 2 {
		t.Fatalf("evil with acme's key: %d replayed=%q calls=%d", res.StatusCode, res.Header.Get(idempotency.HeaderReplayed), *calls)
	}
	// Same key, other payload, another tenant (default): no 422.
	if res := scopedDo(t, srv, "", "", "k-1", `{"b":2}`); res.StatusCode != http.StatusCreated || *calls != 3 {
		t.Fatalf("default tenant with acme's key: %d calls=%d", res.StatusCode, *calls)
	}
	// Within a tenant the key still holds.
	if res := scopedDo(t, srv, "acme", "", "k-1", `{"a":1}`); res.Header.Get(idempotency.HeaderReplayed) != "true" || *calls != 3 {
		t.Fatalf("acme's retry: %d replayed=%q calls=%d", res.StatusCode, res.Header.Get(idempotency.HeaderReplayed), *calls)
	}
	if res := scopedDo(t, srv, "acme", "", "k-1", `{"other":true}`); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("acme, same key, other payload: %d, want 422", res.StatusCode)
	}
}

// With Principal set, keys are scoped by tenant and principal.
func TestMiddlewareKeysPerPrincipal(t *testing.T) {
	opts := idempotency.MiddlewareOptions{Principal: func(r *http.Request) (string, error) {
		return r.Header.Get("X-Test-Principal"), nil
	}}
	var seen []idempotency.Key
	srv, calls := scopedServer(t, opts, func(w http.ResponseWriter, r *http.Request) {
		k, ok := idempotency.KeyFromContext(r.Context())
		if !ok {
			t.Error("handler runs without the key in its context")
		}
		seen = append(seen, k)
		created(w, r)
	})
	scopedDo(t, srv, "acme", "alice", "k-1", `{}`)
	if res := scopedDo(t, srv, "acme", "bob", "k-1", `{}`); res.Header.Get(idempotency.HeaderReplayed) != "" || *calls != 2 {
		t.Fatalf("bob with alice's key: replayed=%q calls=%d", res.Header.Get(idempotency.HeaderReplayed), *calls)
	}
	if res := scopedDo(t, srv, "acme", "alice", "k-1", `{}`); res.Header.Get(idempotency.HeaderReplayed) != "true" || *calls != 2 {
		t.Fatalf("alice's retry: replayed=%q calls=%d", res.Header.Get(idempotency.HeaderReplayed), *calls)
	}
	if len(seen) != 2 || seen[0].Tenant != "acme" || seen[0] == seen[1] {
		t.Fatalf("keys seen by the handler: %+v", seen)
	}
	for _, k := range seen {
		if strings.Contains(k.String(), "alice") || strings.Contains(k.String(), "bob") {
			t.Fatalf("key %s holds the principal as given", k)
		}
	}
	if idempotency.RequestID(seen[0]) == idempotency.RequestID(seen[1]) {
		t.Fatal("two principals' keys bind the same request ID")
	}
	again := seen[0] // a copy: RequestID depends on the key's value only
	if idempotency.RequestID(again) != idempotency.RequestID(seen[0]) || factum.ValidateID("request id", idempotency.RequestID(again)) != nil {
		t.Fatal("RequestID is not a deterministic, valid request ID")
	}
}
