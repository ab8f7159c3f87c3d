package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/idempotency"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// TestResponsesConformToOpenAPI sends requests over every kind of route
// and validates each request and its answer, status, headers and body,
// against the served document with kin-openapi's request and response
// validators: the document describes what the server really sends.
func TestResponsesConformToOpenAPI(t *testing.T) {
	var broken atomic.Bool
	broken.Store(true)
	f := compensationFixture(t, &broken)
	check := conformance(t, f)

	check("POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":2}`, 200, httpapi.HeaderRequestID, "r1", httpapi.HeaderWaitStage, "SNAPSHOT")
	check("POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":2}`, 200, httpapi.HeaderRequestID, "r1")
	check("POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, 409, httpapi.HeaderAggregateVersion, "7")
	check("POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1,"extra":1}`, 400)
	check("POST", "/tenant/acme/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, 404) // another tenant's aggregate reads as missing
	check("GET", "/cart/c1/state", "", 200)
	check("GET", "/cart/c1/state/1", "", 200)
	check("GET", "/cart/c1/state/9", "", 404)
	check("GET", "/cart/c1/state/time/"+time.Now().Add(2*time.Second).UTC().Format(time.RFC3339), "", 200)
	check("GET", "/cart/c1/event/1/5", "", 200)
	check("GET", "/cart/c1/request/r1", "", 200)
	check("GET", "/cart/c1/request/r9", "", 404)
	check("GET", "/cart/c1/snapshot", "", 200)
	check("PUT", "/cart/c1/snapshot", "", 200)
	check("POST", "/cart/snapshot/single", `{"condition":{"operator":"AGGREGATE_ID","value":"c1"}}`, 200)
	check("POST", "/cart/snapshot/single/state", `{"condition":{"operator":"AGGREGATE_ID","value":"c1"}}`, 200)
	check("POST", "/cart/snapshot/list", `{"condition":{"operator":"AGGREGATE_IDS","value":["c1"]},"sort":[{"field":"version","direction":"DESC"}]}`, 200)
	check("POST", "/cart/snapshot/list/state", `{}`, 200)
	check("POST", "/cart/snapshot/paged", `{"pagination":{"index":1,"size":5}}`, 200)
	check("POST", "/cart/snapshot/paged/state", `{"pagination":{"index":1,"size":5}}`, 200)
	check("POST", "/cart/snapshot/count", `{"operator":"ALL"}`, 200)
	check("POST", "/cart/snapshot/list", `{"condition":{"operator":"NOPE"}}`, 400)
	check("DELETE", "/cart/c1", "", 200)
	check("PUT", "/cart/c1/recover", "", 200)
	check("GET", "/healthz", "", 200)
	check("GET", "/readyz", "", 200)

	var page struct {
		List []struct {
			ID struct{ ID string } `json:"id"`
		} `json:"list"`
	}
	for deadline := time.Now().Add(10 * time.Second); len(page.List) == 0; time.Sleep(5 * time.Millisecond) {
		if err := json.Unmarshal(check("GET", "/compensation/executions?status=FAILED", "", 200), &page); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no failed execution")
		}
	}
	id := page.List[0].ID.ID
	check("GET", "/compensation/executions/"+id, "", 200)
	check("PUT", "/compensation/executions/"+id+"/recoverable", `{"recoverable":"RECOVERABLE"}`, 200, httpapi.HeaderOperator, "ops")
	check("PUT", "/compensation/executions/"+id+"/retry-spec", `{"maxRetries":3,"minBackoff":"1s","executionTimeout":"30s"}`, 200)
	check("PUT", "/compensation/executions/"+id+"/function", `{"context":"shop","processor":"cart_counter","name":"cart_counter"}`, 200)
	broken.Store(false)
	check("POST", "/compensation/executions/"+id+"/retry", "", 200, httpapi.HeaderOperator, "ops")
	check("GET", "/compensation/counts", "", 200)
	check("GET", "/tenant/acme/compensation/executions/"+id, "", 404)
}

// conformance returns a check that sends a request to f, wants its status
// and validates the request and its answer against the document f serves.
// A request meant to be refused (400) may not fit the document; every
// answer must.
func conformance(t *testing.T, f *fixture) func(method, path, body string, wantStatus int, headers ...string) []byte {
	t.Helper()
	doc := loadOpenAPI(t, f)
	doc.Servers = nil // match paths alone
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	return func(method, path, body string, wantStatus int, headers ...string) []byte {
		t.Helper()
		req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("%s %s: not in the document: %v", method, path, err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
		// A request meant to be refused may not fit the document either.
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && wantStatus != http.StatusBadRequest {
			t.Fatalf("%s %s: the request does not fit the document: %v", method, path, err)
		}
		req.Body = io.NopCloser(strings.NewReader(body))
		res, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != wantStatus {
			t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, wantStatus, b)
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.StatusCode, Header: res.Header, Options: opts}
		out.SetBodyBytes(b)
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			t.Errorf("%s %s: the answer %d %s does not fit the document: %v", method, path, res.StatusCode, bytes.TrimSpace(b), err)
		}
		return b
	}
}

// stubKeyStore answers Begin itself for two keys: "busy", which another
// request holds, and "down", as a store that cannot be reached.
type stubKeyStore struct{ idempotency.Store }

func (s stubKeyStore) Begin(ctx context.Context, k idempotency.Key, fp string) (idempotency.Record, bool, error) {
	switch k.Value {
	case "busy":
		return idempotency.Record{ExpiresAt: time.Now().Add(time.Minute)}, false, idempotency.ErrInProgress
	case "down":
		return idempotency.Record{}, false, errors.New("the key store cannot be reached")
	}
	return s.Store.Begin(ctx, k, fp)
}

// The refusals of a command route conform to the document too: the
// Idempotency-Key middleware's problem documents (400, 409 with
// Retry-After, 422, 503 with Retry-After) and a clustered service's 503
// with Retry-After when the command bus cannot reach NATS or a
// partition's owner.
func TestCommandRefusalsConformToOpenAPI(t *testing.T) {
	keys, err := idempotency.NewMemory(idempotency.MemoryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := idempotency.NewMiddleware(stubKeyStore{keys}, idempotency.MiddlewareOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	check := conformance(t, newFixture(t, func(_ *engine.Config, h *httpapi.Config) { h.CommandMiddleware = mw.Wrap }))
	const key = "Idempotency-Key"
	problem := func(b []byte, typ string) {
		t.Helper()
		var p idempotency.Problem
		if err := json.Unmarshal(b, &p); err != nil || p.Type != typ {
			t.Errorf("problem %s, want type %s", b, typ)
		}
	}
	check("POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, 200, key, "k-1")
	problem(check("POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":2}`, 422, key, "k-1"), idempotency.ProblemKeyReused)
	problem(check("POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, 409, key, "busy"), idempotency.ProblemInProgress)
	problem(check("POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, 503, key, "down"), idempotency.ProblemUnavailable)
	problem(check("DELETE", "/cart/c1", "", 400, key, strings.Repeat("k", idempotency.MaxValueLen+1)), idempotency.ProblemKeyInvalid)

	unreachable := factum.Errorf(factum.CodeTooManyRequests, "%w", downErr{after: 2 * time.Second})
	check = conformance(t, newFixture(t, func(c *engine.Config, _ *httpapi.Config) {
		c.Bus = engine.SendWrapper(engine.DispatcherBus(command.DispatcherConfig{}), func(command.Bus) command.Bus { return refusingBus{unreachable} })
	}))
	check("POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, 503)
	check("PUT", "/cart/c1/recover", "", 503)
}
