package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/httpapi"
)

// stateBody is the state response of a cart.
type stateBody struct {
	AggregateID factum.AggregateID `json:"aggregateId"`
	Version     int                `json:"version"`
	Deleted     bool               `json:"deleted"`
	State       struct {
		Items map[string]int `json:"items"`
	} `json:"state"`
}

func TestStateRoutes(t *testing.T) {
	f := newFixture(t, nil)
	for i := 1; i <= 3; i++ {
		wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`))
	}
	streams, err := f.rt.Store().Load(t.Context(), factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c1"), 1, 3)
	if err != nil || len(streams) != 3 {
		t.Fatalf("load: %v, %d streams", err, len(streams))
	}

	tests := []struct {
		path    string
		version int
		qty     int
	}{
		{"/cart/c1/state", 3, 3},
		{"/shop.cart/c1/state", 3, 3},
		{"/cart/c1/state/2", 2, 2},
		{"/cart/c1/state/time/" + streams[0].CreateTime.Format(time.RFC3339Nano), 1, 1},
		{"/cart/c1/state/time/" + streams[2].CreateTime.Add(time.Hour).Format(time.RFC3339Nano), 3, 3},
		{"/cart/c1/state/time/" + strconv.FormatInt(streams[2].CreateTime.Add(time.Second).UnixMilli(), 10), 3, 3},
		{"/tenant/default/cart/c1/state", 3, 3},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			r := f.do(t, "GET", tc.path, "")
			wantOK(t, r)
			st := decode[stateBody](t, r)
			if st.Version != tc.version || st.State.Items["sku-1"] != tc.qty || st.AggregateID.ID != "c1" {
				t.Fatalf("state %+v, want version %d with %d of sku-1", st, tc.version, tc.qty)
			}
		})
	}

	errs := []struct {
		path   string
		status int
		code   factum.Code
	}{
		{"/cart/none/state", 404, factum.CodeNotFound},
		{"/cart/c1/state/9", 404, factum.CodeNotFound},
		{"/cart/c1/state/0", 400, factum.CodeIllegalArgument},
		{"/cart/c1/state/x", 400, factum.CodeIllegalArgument},
		{"/cart/c1/state/time/yesterday", 400, factum.CodeIllegalArgument},
		{"/cart/c1/state/time/" + streams[0].CreateTime.Add(-time.Hour).Format(time.RFC3339Nano), 404, factum.CodeNotFound},
		{"/boat/c1/state", 404, factum.CodeNotFound},
	}
	for _, tc := range errs {
		t.Run(tc.path, func(t *testing.T) {
			wantError(t, f.do(t, "GET", tc.path, ""), tc.status, tc.code)
		})
	}
}

func TestEventRoute(t *testing.T) {
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) { h.MaxEventRange = 10 })
	for range 3 {
		wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`))
	}
	r := f.do(t, "GET", "/cart/c1/event/2/3", "")
	wantOK(t, r)
	streams := decode[[]factum.EventStream](t, r)
	if len(streams) != 2 || streams[0].Version != 2 || streams[1].Version != 3 || streams[0].Events[0].Name != "item_added" {
		t.Fatalf("streams %+v", streams)
	}
	if got := decode[[]factum.EventStream](t, f.do(t, "GET", "/cart/c1/event/4/10", "")); len(got) != 0 {
		t.Fatalf("past the end: %d streams, want none", len(got))
	}
	wantError(t, f.do(t, "GET", "/cart/c1/event/1/11", ""), http.StatusBadRequest, factum.CodeIllegalArgument)
	wantError(t, f.do(t, "GET", "/cart/c1/event/3/2", ""), http.StatusBadRequest, factum.CodeIllegalArgument)
	wantError(t, f.do(t, "GET", "/cart/c1/event/a/2", ""), http.StatusBadRequest, factum.CodeIllegalArgument)
	wantError(t, f.do(t, "GET", "/cart/none/event/1/2", ""), http.StatusNotFound, factum.CodeNotFound)
}

func TestRequestLookup(t *testing.T) {
	f := newFixture(t, nil)
	wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, httpapi.HeaderRequestID, "req-1"))
	r := f.do(t, "GET", "/cart/c1/request/req-1", "")
	wantOK(t, r)
	res := decode[command.Result](t, r)
	if res.Stage != factum.StageProcessed || res.AggregateVersion != 1 || res.RequestID != "req-1" {
		t.Fatalf("lookup %+v", res)
	}
	wantError(t, f.do(t, "GET", "/cart/c1/request/req-2", ""), http.StatusNotFound, factum.CodeNotFound)
}

// A tenant never sees another tenant's aggregate, on any route.
func TestTenantCheckedOnEveryRoute(t *testing.T) {
	f := newFixture(t, nil)
	wantOK(t, f.do(t, "POST", "/tenant/acme/cart/c1/add_item", `{"sku":"sku-1","qty":1}`, httpapi.HeaderRequestID, "req-1"))
	r := f.do(t, "GET", "/tenant/acme/cart/c1/state", "")
	wantOK(t, r)
	if st := decode[stateBody](t, r); st.AggregateID.Tenant != "acme" {
		t.Fatalf("tenant %q, want acme", st.AggregateID.Tenant)
	}
	routes := []struct{ method, path, body string }{
		{"GET", "/cart/c1/state", ""},
		{"GET", "/cart/c1/state/1", ""},
		{"GET", "/cart/c1/state/time/" + strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10), ""},
		{"GET", "/cart/c1/event/1/1", ""},
		{"GET", "/cart/c1/event/5/6", ""},
		{"GET", "/cart/c1/request/req-1", ""},
		{"POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`},
		{"DELETE", "/cart/c1", ""},
		{"PUT", "/cart/c1/recover", ""},
	}
	// Every answer is the plain 404 of an aggregate that does not exist,
	// byte for byte (but for the command ID each command gets): nothing
	// says that c1 exists, whose it is, or what it holds.
	for _, prefix := range []string{"", "/tenant/other"} {
		for _, rt := range routes {
			t.Run(rt.method+" "+prefix+rt.path, func(t *testing.T) {
				r := f.do(t, rt.method, prefix+rt.path, rt.body)
				wantError(t, r, http.StatusNotFound, factum.CodeNotFound)
				for _, secret := range []string{"acme", "sku-1", "item_added", `"version"`} {
					if strings.Contains(string(r.body), secret) {
						t.Fatalf("answer reveals %q: %s", secret, r.body)
					}
				}
				if rt.method == "POST" {
					return // add_item creates a missing cart: nothing to compare with
				}
				none := f.do(t, rt.method, prefix+strings.Replace(rt.path, "/c1", "/c-none", 1), rt.body)
				got := strings.ReplaceAll(string(withoutCommandID(t, r.body)), "c1", "c-none")
				if none.status != r.status || got != string(withoutCommandID(t, none.body)) {
					t.Fatalf("answer differs from a missing aggregate's:\n got %d %s\nwant %d %s", r.status, r.body, none.status, none.body)
				}
			})
		}
	}
}

// withoutCommandID re-encodes an error body without its command ID, which
// differs between any two commands.
func withoutCommandID(t *testing.T, b []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	if m["requestId"] == m["commandId"] {
		delete(m, "requestId") // defaulted to the command ID
	}
	delete(m, "commandId")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// memorySnapshots is a SnapshotSource holding one saved state.
type memorySnapshots struct {
	st aggregate.StoredState
}

func (m *memorySnapshots) LatestState(_ context.Context, id factum.AggregateID) (aggregate.StoredState, bool, error) {
	if id.ID != m.st.ID.ID {
		return aggregate.StoredState{}, false, nil
	}
	return m.st, true, nil
}

// With a snapshot source, the state starts from the snapshot and the tail
// after it is folded on top: the snapshot's content shows it was used.
func TestStateFromSnapshot(t *testing.T) {
	snaps := &memorySnapshots{}
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) { h.Snapshots = snaps })
	for range 3 {
		wantOK(t, f.do(t, "POST", "/cart/c1/add_item", `{"sku":"sku-1","qty":1}`))
	}
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c1")
	// A snapshot at version 2 that differs from the history's, marked by sku-9.
	snaps.st = aggregate.StoredState{ID: id, Version: 2, State: []byte(`{"items":{"sku-1":2,"sku-9":7}}`)}
	st := decode[stateBody](t, f.do(t, "GET", "/cart/c1/state", ""))
	if st.Version != 3 || st.State.Items["sku-9"] != 7 || st.State.Items["sku-1"] != 3 {
		t.Fatalf("state %+v, want the snapshot plus version 3", st)
	}
	// Below the snapshot's version, the history is folded from the start.
	st = decode[stateBody](t, f.do(t, "GET", "/cart/c1/state/1", ""))
	if st.Version != 1 || st.State.Items["sku-9"] != 0 {
		t.Fatalf("state %+v, want version 1 from history", st)
	}
	// A snapshot in another tenant is refused like the history: as if
	// the aggregate did not exist.
	snaps.st.ID.Tenant = "acme"
	r := f.do(t, "GET", "/cart/c1/state", "")
	wantError(t, r, http.StatusNotFound, factum.CodeNotFound)
	if strings.Contains(string(r.body), "acme") {
		t.Fatalf("answer names the owner: %s", r.body)
	}
}

func TestHealth(t *testing.T) {
	var draining atomic.Bool
	draining.Store(true)
	f := newFixture(t, func(_ *engine.Config, h *httpapi.Config) {
		h.Ready = func(context.Context) error {
			if draining.Load() {
				return errors.New("draining")
			}
			return nil
		}
	})
	wantOK(t, f.do(t, "GET", "/healthz", ""))
	if r := f.do(t, "GET", "/readyz", ""); r.status != http.StatusServiceUnavailable {
		t.Fatalf("readyz %d, want 503", r.status)
	}
	draining.Store(false)
	wantOK(t, f.do(t, "GET", "/readyz", ""))
}
