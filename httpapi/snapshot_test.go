package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/snapshot"
)

func snapshotFixture(t *testing.T) *fixture {
	t.Helper()
	store := snapshot.NewMemory()
	f := newFixture(t, func(rc *engine.Config, h *httpapi.Config) {
		rc.SnapshotStore = store
		h.SnapshotStore = store
	})
	for _, c := range []struct{ prefix, id, body string }{
		{"", "c1", `{"sku":"sku-1","qty":1}`},
		{"", "c2", `{"sku":"sku-2","qty":5}`},
		{"", "c3", `{"sku":"sku-3","qty":9}`},
		{"/tenant/acme", "a1", `{"sku":"sku-1","qty":7}`},
	} {
		wantOK(t, f.do(t, "POST", c.prefix+"/cart/"+c.id+"/add_item", c.body, httpapi.HeaderWaitStage, "SNAPSHOT"))
	}
	return f
}

func TestSnapshotRoutes(t *testing.T) {
	f := snapshotFixture(t)

	r := f.do(t, "GET", "/cart/c2/snapshot", "")
	wantOK(t, r)
	if !strings.Contains(string(r.body), `"sku-2":5`) {
		t.Fatalf("snapshot %s", r.body)
	}
	wantError(t, f.do(t, "GET", "/tenant/acme/cart/c2/snapshot", ""), http.StatusNotFound, factum.CodeNotFound)
	wantError(t, f.do(t, "GET", "/cart/none/snapshot", ""), http.StatusNotFound, factum.CodeNotFound)

	tests := []struct {
		name, path, body string
		check            func(t *testing.T, body []byte)
	}{
		{"count sees its tenant only", "/cart/snapshot/count", `{}`, func(t *testing.T, b []byte) {
			if strings.TrimSpace(string(b)) != "3" {
				t.Fatalf("count %s, want 3", b)
			}
		}},
		{"count in another tenant", "/tenant/acme/cart/snapshot/count", `{}`, func(t *testing.T, b []byte) {
			if strings.TrimSpace(string(b)) != "1" {
				t.Fatalf("count %s, want 1", b)
			}
		}},
		{"list state by condition", "/cart/snapshot/list/state",
			`{"condition":{"operator":"AGGREGATE_IDS","value":["c2","a1"]}}`, func(t *testing.T, b []byte) {
				var states []json.RawMessage
				if err := json.Unmarshal(b, &states); err != nil || len(states) != 1 || !strings.Contains(string(states[0]), `"sku-2":5`) {
					t.Fatalf("states %s", b)
				}
			}},
		{"single", "/cart/snapshot/single", `{"condition":{"operator":"AGGREGATE_ID","value":"c3"}}`, func(t *testing.T, b []byte) {
			if !strings.Contains(string(b), `"c3"`) {
				t.Fatalf("single %s", b)
			}
		}},
		{"paged", "/cart/snapshot/paged", `{"pagination":{"index":1,"size":2}}`, func(t *testing.T, b []byte) {
			var p struct {
				Total int64             `json:"total"`
				List  []json.RawMessage `json:"list"`
			}
			if err := json.Unmarshal(b, &p); err != nil || p.Total != 3 || len(p.List) != 2 {
				t.Fatalf("paged %s", b)
			}
		}},
		{"a condition cannot reach another tenant", "/cart/snapshot/list",
			`{"condition":{"operator":"TENANT_ID","value":"acme"}}`, func(t *testing.T, b []byte) {
				if strings.TrimSpace(string(b)) != "[]" {
					t.Fatalf("another tenant's snapshot leaked: %s", b)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, "POST", tc.path, tc.body)
			wantOK(t, r)
			tc.check(t, r.body)
		})
	}

	errs := []struct {
		name, path, body string
		status           int
		code             factum.Code
	}{
		{"malformed query", "/cart/snapshot/list", `{"condition":{"operator":"NOPE"}}`, 400, factum.CodeIllegalArgument},
		{"misspelt member", "/cart/snapshot/list", `{"conditon":{}}`, 400, factum.CodeIllegalArgument},
		{"not JSON", "/cart/snapshot/count", `{`, 400, factum.CodeIllegalArgument},
		{"page too large", "/cart/snapshot/paged", `{"pagination":{"index":1,"size":100000}}`, 400, factum.CodeIllegalArgument},
		{"unknown kind", "/cart/snapshot/all", `{}`, 404, factum.CodeNotFound},
		{"count has no state", "/cart/snapshot/count/state", `{}`, 404, factum.CodeNotFound},
		{"single finds nothing", "/cart/snapshot/single", `{"condition":{"operator":"AGGREGATE_ID","value":"zz"}}`, 404, factum.CodeNotFound},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, f.do(t, "POST", tc.path, tc.body), tc.status, tc.code)
		})
	}
}

func TestRegenerateSnapshotRoute(t *testing.T) {
	f := snapshotFixture(t)
	r := f.do(t, "PUT", "/cart/c3/snapshot", "")
	wantOK(t, r)
	var s httpapi.AggregateState
	if err := json.Unmarshal(r.body, &s); err != nil || s.Version != 1 || !strings.Contains(string(s.State), `"sku-3":9`) {
		t.Fatalf("regenerated snapshot %s, %v", r.body, err)
	}
	wantOK(t, f.do(t, "PUT", "/tenant/acme/cart/a1/snapshot", ""))
	wantError(t, f.do(t, "PUT", "/tenant/acme/cart/c3/snapshot", ""), http.StatusNotFound, factum.CodeNotFound)
	wantError(t, f.do(t, "PUT", "/cart/none/snapshot", ""), http.StatusNotFound, factum.CodeNotFound)
}
