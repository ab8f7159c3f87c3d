package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/httpapi"
)

// fixture is a cart service behind an httptest server.
type fixture struct {
	rt  *engine.Engine
	srv *httptest.Server
}

// newFixture starts a cart runtime on the memory store and serves it;
// edit adjusts the runtime and handler configurations.
func newFixture(t testing.TB, edit func(*engine.Config, *httpapi.Config)) *fixture {
	t.Helper()
	rcfg := engine.Config{Store: eventstore.NewMemory()}
	hcfg := httpapi.Config{}
	if edit != nil {
		edit(&rcfg, &hcfg)
	}
	catalog := cart.Items{"sku-1": true, "sku-2": true, "sku-3": true}
	rt, err := engine.New(rcfg, cart.New(catalog, cart.DefaultLimits))
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, rt, hcfg)
}

// serve starts rt and serves it through a handler of cfg (its Engine set
// to rt) until the test's clean-up, which closes the server and shuts rt
// down, failing the test if the shutdown fails.
func serve(t testing.TB, rt *engine.Engine, cfg httpapi.Config) *fixture {
	t.Helper()
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg.Engine = rt
	h, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return &fixture{rt: rt, srv: srv}
}

// response is what a test reads of an HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request; headers alternate names and values.
func (f *fixture) do(t *testing.T, method, path, body string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// decode unmarshals the body into a new T.
func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	return v
}

// wantError checks an error response's status and code.
func wantError(t *testing.T, r response, status int, code factum.Code) httpapi.ErrorBody {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	e := decode[httpapi.ErrorBody](t, r)
	if e.Code != code {
		t.Fatalf("code %s, want %s; body %s", e.Code, code, r.body)
	}
	if e.Message == "" {
		t.Fatalf("error without a message: %s", r.body)
	}
	return e
}

// wantOK checks a 200 response.
func wantOK(t *testing.T, r response) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
}
