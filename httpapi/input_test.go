package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/snapshot"
)

// A body that is not valid UTF-8 is refused with 400, never stored with
// U+FFFD in place of its bytes.
func TestInvalidUTF8BodyRefused(t *testing.T) {
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) { h.SnapshotStore = snapshot.NewMemory() })
	for _, c := range []struct{ path, body string }{
		{"/cart/c1/add_item", "{\"sku\":\"sku-1\xff\",\"qty\":1}"},
		{"/cart/c1/add_item", "{\"sku\":\"sku-1\",\"qty\":1,\"x\xc3\":2}"},
		{"/cart/snapshot/list", "{\"condition\":{\"operator\":\"EQ\",\"field\":\"state.a\",\"value\":\"\xed\xa0\x80\"}}"},
	} {
		r := f.do(t, "POST", c.path, c.body)
		wantError(t, r, http.StatusBadRequest, factum.CodeBadRequest)
		if !strings.Contains(string(r.body), "UTF-8") {
			t.Fatalf("%s: error does not say why: %s", c.path, r.body)
		}
	}
	streams, err := f.rt.Store().Load(t.Context(), f.rt.Registry().Types()[0].Named().WithID("c1"), 1, eventstore.MaxVersion)
	if err != nil || len(streams) != 0 {
		t.Fatalf("streams after refused bodies: %v %v", streams, err)
	}
	// Valid multi-byte text, a genuine U+FFFD and a surrogate pair reach
	// the command intact (the cart refuses the unknown item, naming it).
	for _, sku := range []string{"sku-é", `sku-\uFFFD`, `sku-\ud83d\ude00`, `sku-\\ud800`} {
		r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"`+sku+`","qty":1}`)
		e := wantError(t, r, http.StatusBadRequest, factum.CodeIllegalArgument)
		var want string
		if err := json.Unmarshal([]byte(`"`+sku+`"`), &want); err != nil || !strings.Contains(e.Message, fmt.Sprintf("%q", want)) {
			t.Fatalf("sku %s: %s (%v)", sku, r.body, err)
		}
	}
	// A lone surrogate escape decodes to U+FFFD: refused like bad bytes.
	for _, sku := range []string{`sku-\ud800`, `sku-\udc00x`, `sku-\ud800\u0041`} {
		r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"`+sku+`","qty":1}`)
		wantError(t, r, http.StatusBadRequest, factum.CodeBadRequest)
	}
}

// Numbers in headers and paths are canonical decimals: no sign, no
// leading zeros, no spaces.
func TestNonCanonicalNumbersRefused(t *testing.T) {
	f := newFixture(t, nil)
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`))
	// (Spaces around a header value are trimmed by net/http before any
	// handler sees it.)
	for _, v := range []string{"+1", "01", "-0", "-1", "1e0", "0x1", "1_0", "１"} {
		t.Run("version "+v, func(t *testing.T) {
			r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-2","qty":1}`, httpapi.HeaderAggregateVersion, v)
			wantError(t, r, http.StatusBadRequest, factum.CodeIllegalArgument)
		})
	}
	for _, p := range []string{"/cart/c1/state/+1", "/cart/c1/state/01", "/cart/c1/event/+1/1", "/cart/c1/event/1/+1", "/cart/c1/event/01/1"} {
		wantError(t, f.do(t, "GET", p, ""), http.StatusBadRequest, factum.CodeIllegalArgument)
	}
	for _, v := range []string{"+5", "05"} {
		r := f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-2","qty":1}`, httpapi.HeaderWaitTimeout, v)
		wantError(t, r, http.StatusBadRequest, factum.CodeIllegalArgument)
	}
	// The canonical forms still work.
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-2","qty":1}`, httpapi.HeaderAggregateVersion, "1", httpapi.HeaderWaitTimeout, "5000"))
	wantOK(t, f.do(t, "GET", "/cart/c1/state/2", ""))
	wantOK(t, f.do(t, "GET", "/cart/c1/event/1/2", ""))
}

// Every error a client can see is the typed JSON error: the handler's
// own, those net/http writes inside the handler chain (http.Error in a
// middleware, the mux's), and a panic's.
func TestErrorsAreTypedJSON(t *testing.T) {
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) {
		h.SnapshotStore = snapshot.NewMemory()
		h.CommandMiddleware = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.Header.Get("X-Test") {
				case "plain":
					w.Header().Set("Allow", "GET")
					http.Error(w, "secret internals of the middleware", http.StatusMethodNotAllowed)
				case "plain-5xx":
					http.Error(w, "boom", http.StatusBadGateway)
				case "panic":
					panic("middleware bug")
				case "text-ok":
					w.Header().Set("Content-Type", "text/plain; charset=utf-8")
					w.Write([]byte("fine"))
				default:
					next.ServeHTTP(w, r)
				}
			})
		}
	})
	for _, c := range []struct {
		method, path, test string
		status             int
		code               factum.Code
	}{
		{"POST", "/openapi.json", "", http.StatusNotFound, factum.CodeNotFound},
		{"PATCH", "/cart/c1/state", "", http.StatusNotFound, factum.CodeNotFound},
		{"GET", "/tenant/", "", http.StatusNotFound, factum.CodeNotFound},
		{"GET", "/tenant/acme/nothing/here/at/all/really", "", http.StatusNotFound, factum.CodeNotFound},
		{"POST", "/cart/c1/add_item", "plain", http.StatusMethodNotAllowed, factum.CodeBadRequest},
		{"POST", "/tenant/acme/cart/c1/add_item", "plain-5xx", http.StatusBadGateway, factum.CodeInternalServerError},
		{"POST", "/cart/c1/add_item", "panic", http.StatusInternalServerError, factum.CodeInternalServerError},
	} {
		r := f.do(t, c.method, c.path, "", "X-Test", c.test)
		if r.status != c.status {
			t.Fatalf("%s %s %s: %d %s, want %d", c.method, c.path, c.test, r.status, r.body, c.status)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s %s %s: Content-Type %q, body %q", c.method, c.path, c.test, ct, r.body)
		}
		var e httpapi.ErrorBody
		if err := json.Unmarshal(r.body, &e); err != nil || e.Code != c.code || e.Message == "" {
			t.Fatalf("%s %s %s: body %q is not a %s error body (%v)", c.method, c.path, c.test, r.body, c.code, err)
		}
		if bytes.Contains(r.body, []byte("secret internals")) || bytes.Contains(r.body, []byte("middleware bug")) {
			t.Fatalf("error body passes on internals: %s", r.body)
		}
		if c.test == "plain" && r.header.Get("Allow") != "GET" {
			t.Fatal("405 lost its Allow header")
		}
	}
	// A successful text response is left alone.
	if r := f.do(t, "POST", "/cart/c1/add_item", "", "X-Test", "text-ok"); r.status != http.StatusOK || string(r.body) != "fine" {
		t.Fatalf("text response: %d %q", r.status, r.body)
	}
	// A body over the limit.
	big := `{"sku":"` + strings.Repeat("x", httpapi.DefaultMaxBodyBytes) + `","qty":1}`
	r := f.do(t, "POST", "/cart/c1/add_item", big)
	if r.status != http.StatusRequestEntityTooLarge || r.header.Get("Content-Type") != "application/json" || !bytes.Contains(r.body, []byte(`"code"`)) {
		t.Fatalf("body too large: %d %q %.200s", r.status, r.header.Get("Content-Type"), r.body)
	}
}

// The query bomb of issue 13 is refused with 400 before it is built.
func TestQueryBombRefused(t *testing.T) {
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) { h.SnapshotStore = snapshot.NewMemory() })
	var b strings.Builder
	for range 4990 {
		b.WriteString(`{"operator":"AND","children":[`)
	}
	b.WriteString(`{"operator":"ALL"}`)
	for range 4990 {
		b.WriteString(`]}`)
	}
	bomb := b.String()
	for _, c := range []struct{ path, body string }{
		{"/cart/snapshot/count", bomb},
		{"/cart/snapshot/list", `{"condition":` + bomb + `}`},
		{"/cart/snapshot/paged/state", `{"condition":` + bomb + `}`},
	} {
		r := f.do(t, "POST", c.path, c.body)
		e := wantError(t, r, http.StatusBadRequest, factum.CodeIllegalArgument)
		if !strings.Contains(e.Message, "deeper than") {
			t.Fatalf("%s: %s", c.path, r.body)
		}
	}
}
