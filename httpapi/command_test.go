package httpapi_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
)

func TestCommandTour(t *testing.T) {
	f := newFixture(t, nil)

	r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":2}`, httpapi.HeaderRequestID, "req-1")
	wantOK(t, r)
	first := decode[command.Result](t, r)
	if first.Stage != factum.StageProcessed || first.AggregateVersion != 1 || first.RequestID != "req-1" || first.AggregateID.ID != "c1" {
		t.Fatalf("first result %+v", first)
	}
	if got := r.header.Get(httpapi.HeaderAggregateVersion); got != "1" {
		t.Fatalf("version header %q, want 1", got)
	}

	// The same request again: the first attempt's outcome, not a second stream.
	r = f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":2}`, httpapi.HeaderRequestID, "req-1")
	wantOK(t, r)
	again := decode[command.Result](t, r)
	if !again.Duplicate || again.AggregateVersion != 1 {
		t.Fatalf("retry result %+v, want the duplicate of version 1", again)
	}

	r = f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-2","qty":1}`, httpapi.HeaderAggregateVersion, "1")
	wantOK(t, r)
	if v := decode[command.Result](t, r).AggregateVersion; v != 2 {
		t.Fatalf("version %d, want 2", v)
	}

	// Stale expected version.
	r = f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-3","qty":1}`, httpapi.HeaderAggregateVersion, "1", httpapi.HeaderRequestID, "req-stale")
	e := wantError(t, r, http.StatusConflict, factum.CodeCommandExpectVersionConflict)
	if e.RequestID != "req-stale" || e.AggregateID.ID != "c1" || e.CommandID == "" {
		t.Fatalf("error body lacks identities: %+v", e)
	}

	streams, err := f.rt.Store().Load(t.Context(), f.rt.Registry().Types()[0].Named().WithID("c1"), 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(streams) != 2 {
		t.Fatalf("%d streams, want 2", len(streams))
	}
}

func TestCommandErrors(t *testing.T) {
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) { h.MaxBodyBytes = 64 })
	// The aggregate exists in tenant "default".
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`))

	tests := []struct {
		name    string
		path    string
		body    string
		headers []string
		status  int
		code    factum.Code
	}{
		{"bad JSON", "/cart/c1/add_item", `{"sku":`, nil, 400, factum.CodeBadRequest},
		{"wrong JSON type", "/cart/c1/add_item", `{"sku":"sku-1","qty":"two"}`, nil, 400, factum.CodeBadRequest},
		{"unknown command", "/cart/c1/fly_away", `{}`, nil, 404, factum.CodeNotFound},
		{"unknown aggregate", "/boat/b1/add_item", `{}`, nil, 404, factum.CodeNotFound},
		{"oversize body", "/cart/c1/add_item", `{"sku":"` + strings.Repeat("x", 100) + `","qty":1}`, nil, 413, factum.CodeBadRequest},
		{"excessive wait timeout", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, []string{httpapi.HeaderWaitTimeout, "2h"}, 400, factum.CodeIllegalArgument},
		{"excessive wait timeout in ms", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, []string{httpapi.HeaderWaitTimeout, "3600000"}, 400, factum.CodeIllegalArgument},
		{"malformed wait timeout", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, []string{httpapi.HeaderWaitTimeout, "soon"}, 400, factum.CodeIllegalArgument},
		{"negative wait timeout", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, []string{httpapi.HeaderWaitTimeout, "-5s"}, 400, factum.CodeIllegalArgument},
		{"unknown stage", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, []string{httpapi.HeaderWaitStage, "DONE"}, 400, factum.CodeIllegalArgument},
		{"function without branch stage", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, []string{httpapi.HeaderWaitFunction, "f"}, 400, factum.CodeIllegalArgument},
		{"malformed version", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, []string{httpapi.HeaderAggregateVersion, "x"}, 400, factum.CodeIllegalArgument},
		{"malformed request id", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, []string{httpapi.HeaderRequestID, "a b"}, 400, factum.CodeIllegalArgument},
		{"validation", "/cart/c1/add_item", `{"sku":"","qty":0}`, nil, 400, factum.CodeCommandValidation},
		{"business rule", "/cart/c1/remove_item", `{"sku":"sku-3"}`, nil, 409, factum.CodeIllegalState},
		{"missing aggregate", "/cart/nope/remove_item", `{"sku":"sku-1"}`, nil, 404, factum.CodeNotFound},
		{"no id for a non-create command", "/cart/remove_item", `{"sku":"sku-1"}`, nil, 400, factum.CodeIllegalArgument},
		{"wrong tenant", "/tenant/acme/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, nil, 404, factum.CodeNotFound},
		{"bad tenant", "/tenant/a%20b/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, nil, 400, factum.CodeIllegalArgument},
		{"no route", "/cart/c1/add_item/extra", `{}`, nil, 404, factum.CodeNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, "POST", tc.path, tc.body, tc.headers...)
			e := wantError(t, r, tc.status, tc.code)
			if tc.code == factum.CodeCommandValidation && len(e.BindingErrors) != 2 {
				t.Fatalf("binding errors %+v, want sku and qty", e.BindingErrors)
			}
		})
	}
}

func TestCommandWaitSent(t *testing.T) {
	f := newFixture(t, nil)
	r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, httpapi.HeaderWaitStage, "sent")
	wantOK(t, r)
	if res := decode[command.Result](t, r); res.Stage != factum.StageSent || res.CommandID == "" {
		t.Fatalf("result %+v, want SENT", res)
	}
}

func TestDeleteAndRecover(t *testing.T) {
	f := newFixture(t, nil)
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`))
	wantOK(t, f.do(t, "DELETE", "/cart/c1", ""))
	wantError(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`), http.StatusGone, factum.CodeIllegalAccessDeletedAggregate)
	st := decode[stateBody](t, f.do(t, "GET", "/cart/c1/state", ""))
	if !st.Deleted || st.Version != 2 {
		t.Fatalf("state after delete %+v", st)
	}
	wantOK(t, f.do(t, "PUT", "/cart/c1/recover", ""))
	wantError(t, f.do(t, "PUT", "/cart/c1/recover", ""), http.StatusConflict, factum.CodeIllegalState)
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`))
	// Delete in another tenant is refused as for a missing aggregate.
	wantError(t, f.do(t, "DELETE", "/tenant/acme/cart/c1", ""), http.StatusNotFound, factum.CodeNotFound)
	wantError(t, f.do(t, "PUT", "/tenant/acme/cart/c1/recover", ""), http.StatusNotFound, factum.CodeNotFound)
}

// N concurrent requests with one request ID make exactly one stream, and
// every caller learns its version.
func TestConcurrentDuplicateRequests(t *testing.T) {
	f := newFixture(t, nil)
	const n = 32
	var wg sync.WaitGroup
	versions := make([]int, n)
	statuses := make([]int, n)
	for i := range n {
		wg.Go(func() {
			r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, httpapi.HeaderRequestID, "same")
			statuses[i] = r.status
			if r.status == http.StatusOK {
				versions[i] = decode[command.Result](t, r).AggregateVersion
			}
		})
	}
	wg.Wait()
	for i := range n {
		if statuses[i] != http.StatusOK || versions[i] != 1 {
			t.Fatalf("request %d: status %d version %d, want 200 and version 1", i, statuses[i], versions[i])
		}
	}
	st := decode[stateBody](t, f.do(t, "GET", "/cart/c1/state", ""))
	if st.Version != 1 || st.State.Items["sku-1"] != 1 {
		t.Fatalf("state %+v, want one add", st)
	}
}

func TestCommandMiddlewareWrapsCommandRoutesOnly(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) {
		h.CommandMiddleware = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen[r.Method]++
				mu.Unlock()
				if r.Header.Get("Idempotency-Key") == "refuse" {
					http.Error(w, "refused", http.StatusUnprocessableEntity)
					return
				}
				next.ServeHTTP(w, r)
			})
		}
	})
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`))
	if r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, "Idempotency-Key", "refuse"); r.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want the middleware's 422", r.status)
	}
	wantOK(t, f.do(t, "DELETE", "/cart/c1", ""))
	wantOK(t, f.do(t, "PUT", "/tenant/default/cart/c1/recover", ""))
	wantOK(t, f.do(t, "GET", "/cart/c1/state", ""))
	mu.Lock()
	defer mu.Unlock()
	if seen["POST"] != 2 || seen["DELETE"] != 1 || seen["PUT"] != 1 || seen["GET"] != 0 {
		t.Fatalf("middleware saw %v", seen)
	}
}
