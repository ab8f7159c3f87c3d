package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/idempotency"
)

// Each problem example the document gives on a command route is the
// document the Idempotency-Key middleware sends for that refusal: its
// status, title and detail, not a paraphrase of them.
func TestOpenAPIProblemExamplesAreSent(t *testing.T) {
	keys, err := idempotency.NewMemory(idempotency.MemoryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := idempotency.NewMiddleware(keys, idempotency.MiddlewareOptions{Required: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) { h.CommandMiddleware = mw.Wrap })
	examples := map[string]map[string]any{}
	for status, r := range loadOpenAPI(t, f).Paths.Find("/cart/{id}/add_item").Post.Responses.Map() {
		if pt := r.Value.Content.Get("application/problem+json"); pt != nil {
			for _, ex := range pt.Examples {
				v := ex.Value.Value.(map[string]any)
				v["documented status"] = status
				examples[v["type"].(string)] = v
			}
		}
	}
	const key = idempotency.HeaderKey
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, key, "k-1"))
	for _, tc := range []struct {
		name    string
		body    string
		headers []string
	}{
		{"key missing", `{"sku":"sku-1","qty":1}`, nil},
		{"key reused", `{"sku":"sku-1","qty":2}`, []string{key, "k-1"}},
		{"body too large", `{"sku":"` + strings.Repeat("s", idempotency.DefaultMaxRequestBytes) + `","qty":1}`, []string{key, "k-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, "POST", "/cart/c1/add_item", tc.body, tc.headers...)
			var p idempotency.Problem
			if err := json.Unmarshal(r.body, &p); err != nil {
				t.Fatalf("%d %s: %v", r.status, r.body, err)
			}
			ex, ok := examples[p.Type]
			if !ok {
				t.Fatalf("sent %+v: the document has no example of its type", p)
			}
			if ex["documented status"] != strconv.Itoa(r.status) || ex["title"] != p.Title || ex["detail"] != p.Detail || ex["status"] != float64(p.Status) {
				t.Fatalf("sent %d %+v, documented %v", r.status, p, ex)
			}
		})
	}
}
