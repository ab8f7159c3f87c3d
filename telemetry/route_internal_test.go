package telemetry

import (
	"net/http/httptest"
	"testing"
)

func TestRouteTemplates(t *testing.T) {
	rt := newRouter()
	for _, c := range []struct {
		method, path, want string
		command            bool
	}{
		{"POST", "/cart/cart-1/add_item", "POST /{aggregate}/{id}/{command}", true},
		{"POST", "/cart/create", "POST /{aggregate}/{command}", true},
		{"DELETE", "/cart/cart-1", "DELETE /{aggregate}/{id}", true},
		{"GET", "/cart/cart-1/state", "GET /{aggregate}/{id}/state", false},
		{"GET", "/cart/cart-1/state/3", "GET /{aggregate}/{id}/state/{version}", false},
		{"GET", "/tenant/acme/cart/cart-1/state", "GET /tenant/{tenant}/{aggregate}/{id}/state", false},
		{"POST", "/tenant/acme/cart/c/add_item", "POST /tenant/{tenant}/{aggregate}/{id}/{command}", true},
		{"GET", "/compensation/executions/e-1", "GET /compensation/executions/{id}", false},
		{"GET", "/tenant/acme/compensation/counts", "GET /tenant/{tenant}/compensation/counts", false},
		{"GET", "/readyz", "GET /readyz", false},
		{"GET", "/metrics", "GET /metrics", false},
		{"GET", "/a/b/c/d/e/f/g", "other", false},
		{"PATCH", "/cart/cart-1", "other", false},
		{"GET", "/tenant/", "other", false},
	} {
		got, cmd := rt.route(httptest.NewRequest(c.method, c.path, nil))
		if got != c.want || cmd != c.command {
			t.Errorf("%s %s: %q %v, want %q %v", c.method, c.path, got, cmd, c.want, c.command)
		}
	}
}
