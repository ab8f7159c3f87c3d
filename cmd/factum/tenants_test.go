package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/httpapi"
)

// The leaks of issue 13, each reproduced against the example service as a
// hostile tenant would try them, on SQLite and on PostgreSQL. Tenant
// "acme" owns the data; tenant "evil" probes it.
func TestTenantsSealed(t *testing.T) {
	backends := []struct {
		name  string
		start func(t *testing.T) *server
	}{
		{"SQLite", func(t *testing.T) *server { return startTestServer(t, t.TempDir()) }},
		{"PostgreSQL", startPostgresServer},
	}
	cases := []struct {
		name string
		fn   func(t *testing.T, u string)
	}{
		{"ReusedRequestIDIsNotAnotherTenantsDuplicate", testReusedRequestID},
		{"CreateWithoutIDRunsTheCallersCommand", testCreateWithoutID},
		{"LookupFromAnotherTenantIsNotFound", testLookupOtherTenant},
		{"WrongTenantReadsArePlain404s", testWrongTenantReads},
		{"IdempotencyKeysPerTenant", testIdempotencyPerTenant},
		{"IdempotencyKeyWithWaitTimeoutRunsOnce", testIdempotencyTimeout},
		{"InternalAggregatesNotRoutable", testInternalAggregates},
		{"UsernamesPerTenant", testUsernamesPerTenant},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.start(t)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.fn(t, s.URL) })
			}
		})
	}
}

// noLeak fails if body holds any of the secrets.
func noLeak(t *testing.T, what string, body []byte, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && bytes.Contains(body, []byte(s)) {
			t.Fatalf("%s reveals %q: %s", what, s, body)
		}
	}
}

// sameAnswer checks that the answer about acme's aggregate (id) equals,
// byte for byte once the ID is swapped, the answer about an aggregate that
// does not exist (none).
func sameAnswer(t *testing.T, what string, status int, body []byte, noneStatus int, noneBody []byte, id, none string) {
	t.Helper()
	if status != http.StatusNotFound {
		t.Fatalf("%s: %d %s, want 404", what, status, body)
	}
	got := bytes.ReplaceAll(body, []byte(id), []byte(none))
	if status != noneStatus || !bytes.Equal(got, noneBody) {
		t.Fatalf("%s differs from the answer for a missing aggregate:\n got %d %s\nwant %d %s", what, status, body, noneStatus, noneBody)
	}
}

func mustPost(t *testing.T, url, body string, headers ...string) command.Result {
	t.Helper()
	status, b := post(t, url, body, headers...)
	var r command.Result
	if status != http.StatusOK || json.Unmarshal(b, &r) != nil {
		t.Fatalf("POST %s: %d %s", url, status, b)
	}
	return r
}

func testReusedRequestID(t *testing.T, u string) {
	acme := mustPost(t, u+"/tenant/acme/cart/c-42/add_item", `{"sku":"sku-1","qty":2}`, httpapi.HeaderRequestID, "req-shared")
	// The same request ID from evil on acme's cart: not acme's outcome,
	// nothing of acme's, and the NotFound of a missing aggregate (add_item
	// may create a missing cart, so the byte-for-byte comparison with a
	// missing one is made with remove_item below).
	for _, c := range []struct{ name, headers string }{{"no version", ""}, {"with version", "7"}} {
		h := []string{httpapi.HeaderRequestID, "req-shared"}
		if c.headers != "" {
			h = append(h, httpapi.HeaderAggregateVersion, c.headers)
		}
		status, body := post(t, u+"/tenant/evil/cart/c-42/add_item", `{"sku":"sku-1","qty":2}`, h...)
		if status == http.StatusOK {
			t.Fatalf("%s: evil got 200 for acme's request: %s", c.name, body)
		}
		noLeak(t, c.name+": answer to evil", body, "acme", acme.CommandID, "item_added", `"version":1`, `"duplicate"`)
		if status != http.StatusNotFound {
			t.Fatalf("%s: evil got %d %s, want 404", c.name, status, body)
		}
	}
	// A command that cannot create: acme's cart and a missing one look alike.
	status, body := post(t, u+"/tenant/evil/cart/c-42/remove_item", `{"sku":"sku-1"}`, httpapi.HeaderRequestID, "req-shared")
	noneStatus, noneBody := post(t, u+"/tenant/evil/cart/c-none/remove_item", `{"sku":"sku-1"}`, httpapi.HeaderRequestID, "req-shared")
	sameAnswer(t, "remove_item from evil", status, dropVolatile(body), noneStatus, dropVolatile(noneBody), "c-42", "c-none")
	// acme's own retry still gets its outcome.
	again := mustPost(t, u+"/tenant/acme/cart/c-42/add_item", `{"sku":"sku-1","qty":2}`, httpapi.HeaderRequestID, "req-shared")
	if !again.Duplicate || again.AggregateVersion != 1 {
		t.Fatalf("acme's retry: %+v", again)
	}
}

// dropVolatile removes the fields that differ between any two requests
// (the command ID the gateway gives each one).
func dropVolatile(b []byte) []byte {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	if m["requestId"] == m["commandId"] {
		delete(m, "requestId") // defaulted to the command ID
	}
	delete(m, "commandId")
	out, _ := json.Marshal(m)
	return out
}

func testCreateWithoutID(t *testing.T, u string) {
	if code, body := post(t, u+"/tenant/acme/inventory/pear/restock", `{"qty":5}`); code != http.StatusOK {
		t.Fatalf("restock: %d %s", code, body)
	}
	acme := mustPost(t, u+"/tenant/acme/order/place_order", `{"sku":"pear","qty":1}`, httpapi.HeaderRequestID, "req-create")
	evil := mustPost(t, u+"/tenant/evil/order/place_order", `{"sku":"plum","qty":3}`, httpapi.HeaderRequestID, "req-create")
	if evil.Duplicate || evil.AggregateID.ID == acme.AggregateID.ID || evil.AggregateID.TenantOrDefault() != "evil" || evil.AggregateVersion != 1 {
		t.Fatalf("evil's create with acme's request ID answered %+v (acme's: %+v)", evil, acme)
	}
	b, _ := json.Marshal(evil)
	noLeak(t, "evil's create", b, acme.AggregateID.ID, acme.CommandID, "acme")
	_, state := get(t, u+"/tenant/evil/order/"+evil.AggregateID.ID+"/state")
	if !strings.Contains(string(state), `"plum"`) {
		t.Fatalf("evil's order state %s does not hold evil's command", state)
	}
	// Retries of each create still find their own first attempt.
	again := mustPost(t, u+"/tenant/evil/order/place_order", `{"sku":"plum","qty":3}`, httpapi.HeaderRequestID, "req-create")
	if !again.Duplicate || again.AggregateID.ID != evil.AggregateID.ID {
		t.Fatalf("evil's retry: %+v", again)
	}
}

func testLookupOtherTenant(t *testing.T, u string) {
	acme := mustPost(t, u+"/tenant/acme/cart/c-look/add_item", `{"sku":"sku-1","qty":1}`, httpapi.HeaderRequestID, "req-look")
	status, body := get(t, u+"/tenant/evil/cart/c-look/request/req-look")
	noneStatus, noneBody := get(t, u+"/tenant/evil/cart/c-none/request/req-look")
	noLeak(t, "lookup from evil", body, "acme", acme.CommandID, "item_added")
	sameAnswer(t, "lookup from evil", status, body, noneStatus, noneBody, "c-look", "c-none")
}

func testWrongTenantReads(t *testing.T, u string) {
	acme := mustPost(t, u+"/tenant/acme/cart/c-read/add_item", `{"sku":"sku-1","qty":1}`,
		httpapi.HeaderRequestID, "req-read", httpapi.HeaderWaitStage, "SNAPSHOT")
	for _, route := range []string{
		"/cart/%s/state",
		"/cart/%s/state/1",
		"/cart/%s/state/time/4102444800000",
		"/cart/%s/event/1/1",
		"/cart/%s/request/req-read",
		"/cart/%s/snapshot",
	} {
		status, body := get(t, u+"/tenant/evil"+fmt.Sprintf(route, "c-read"))
		noneStatus, noneBody := get(t, u+"/tenant/evil"+fmt.Sprintf(route, "c-none"))
		noLeak(t, route, body, "acme", acme.CommandID, "item_added", "sku-1")
		sameAnswer(t, route, status, body, noneStatus, noneBody, "c-read", "c-none")
	}
	req, _ := http.NewRequest("PUT", u+"/tenant/evil/cart/c-read/snapshot", nil)
	status, body := doReq(t, req)
	req, _ = http.NewRequest("PUT", u+"/tenant/evil/cart/c-none/snapshot", nil)
	noneStatus, noneBody := doReq(t, req)
	noLeak(t, "PUT snapshot", body, "acme", "sku-1")
	sameAnswer(t, "PUT snapshot", status, body, noneStatus, noneBody, "c-read", "c-none")
	// Queries see only the caller's tenant.
	status, body = post(t, u+"/tenant/evil/cart/snapshot/list", `{"condition":{"operator":"AGGREGATE_ID","value":"c-read"}}`)
	if status != http.StatusOK || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("evil's query of acme's cart: %d %s", status, body)
	}
	// Compensation: an execution of another tenant and one that does not
	// exist answer alike, naming neither tenant.
	status, body = get(t, u+"/tenant/evil/compensation/executions/x-1")
	if status != http.StatusNotFound {
		t.Fatalf("compensation execution: %d %s", status, body)
	}
	noLeak(t, "compensation execution", body, factum.DefaultTenant, "acme")
}

func testIdempotencyPerTenant(t *testing.T, u string) {
	status, body := post(t, u+"/tenant/acme/cart/c-idem/add_item", `{"sku":"sku-1","qty":1}`, "Idempotency-Key", "k-shared")
	if status != http.StatusOK {
		t.Fatalf("acme: %d %s", status, body)
	}
	// The same key and payload in evil runs evil's own command.
	req, _ := http.NewRequest("POST", u+"/tenant/evil/cart/c-idem-evil/add_item", strings.NewReader(`{"sku":"sku-1","qty":1}`))
	req.Header.Set("Idempotency-Key", "k-shared")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("evil with acme's key: %d replayed=%q", res.StatusCode, res.Header.Get("Idempotent-Replayed"))
	}
	// Another payload with acme's key is no 422 for evil.
	status, body = post(t, u+"/tenant/evil/cart/c-idem-evil/add_item", `{"sku":"sku-2","qty":1}`, "Idempotency-Key", "k-only-acme")
	if status != http.StatusOK {
		t.Fatalf("evil, fresh key: %d %s", status, body)
	}
	status, body = post(t, u+"/tenant/acme/cart/c-idem/add_item", `{"sku":"sku-3","qty":1}`, "Idempotency-Key", "k-only-acme")
	if status != http.StatusOK {
		t.Fatalf("acme with a key evil used: %d %s", status, body)
	}
}

func testIdempotencyTimeout(t *testing.T, u string) {
	for _, c := range []struct{ path, body string }{
		{"/tenant/acme/cart/c-slow/add_item", `{"sku":"sku-1","qty":1}`},
		{"/tenant/acme/order/place_order", `{"sku":"fig","qty":1}`},
	} {
		statuses := map[int]int{}
		ids := map[string]bool{}
		for range 10 {
			status, b := post(t, u+c.path, c.body, "Idempotency-Key", "k-slow",
				httpapi.HeaderWaitStage, "SNAPSHOT", httpapi.HeaderWaitTimeout, "1ms")
			statuses[status]++
			var r struct {
				AggregateID factum.AggregateID `json:"aggregateId"`
			}
			if status != http.StatusOK && status != http.StatusRequestTimeout || json.Unmarshal(b, &r) != nil {
				t.Fatalf("%s: %d %s", c.path, status, b)
			}
			ids[r.AggregateID.ID] = true
		}
		// Settle: a last retry that waits long enough.
		r := mustPost(t, u+c.path, c.body, "Idempotency-Key", "k-slow")
		ids[r.AggregateID.ID] = true
		if len(ids) != 1 {
			t.Fatalf("%s: 10 tries with one Idempotency-Key reached %d aggregates (statuses %v), want 1", c.path, len(ids), statuses)
		}
		// Only the first stream is the command's (the order saga appends
		// the second).
		status, events := get(t, u+"/tenant/acme/"+r.AggregateID.Aggregate+"/"+r.AggregateID.ID+"/event/1/100")
		var streams []factum.EventStream
		if status != http.StatusOK || json.Unmarshal(events, &streams) != nil || len(streams) == 0 {
			t.Fatalf("%s events: %d %s", c.path, status, events)
		}
		commands := 0
		for _, s := range streams {
			if s.RequestID == streams[0].RequestID {
				commands++
			}
		}
		if streams[0].RequestID != r.RequestID || commands != 1 || c.path == "/tenant/acme/cart/c-slow/add_item" && len(streams) != 1 {
			t.Fatalf("%s: %d streams (%d of the keyed request) after 10 tries with one Idempotency-Key (statuses %v), want 1", c.path, len(streams), commands, statuses)
		}
	}
}

func testInternalAggregates(t *testing.T, u string) {
	for _, p := range []string{
		"/execution_failed/x-1/record_execution_failure",
		"/execution_failed/record_execution_failure",
		"/tenant/evil/execution_failed/x-1/force_prepare_compensation",
		"/shop.execution_failed/x-1/record_execution_failure",
	} {
		status, body := post(t, u+p, `{}`)
		if status != http.StatusNotFound {
			t.Fatalf("POST %s: %d %s, want 404", p, status, body)
		}
	}
	for _, p := range []string{"/execution_failed/x-1/state", "/execution_failed/x-1/event/1/1"} {
		if status, body := get(t, u+p); status != http.StatusNotFound {
			t.Fatalf("GET %s: %d %s, want 404", p, status, body)
		}
	}
	if status, body := post(t, u+"/execution_failed/snapshot/list", `{}`); status != http.StatusNotFound {
		t.Fatalf("query of executions: %d %s, want 404", status, body)
	}
	_, doc := get(t, u+"/openapi.json")
	if bytes.Contains(doc, []byte("execution_failed")) {
		t.Fatal("the OpenAPI document lists the internal execution_failed aggregate")
	}
}

func testUsernamesPerTenant(t *testing.T, u string) {
	mustPost(t, u+"/tenant/acme/user/u-acme/register_user", `{"username":"carol","email":"c@acme.example"}`)
	// evil registers the same name in its own tenant.
	mustPost(t, u+"/tenant/evil/user/u-evil/register_user", `{"username":"carol","email":"c@evil.example"}`)
	// Within a tenant the name is still unique.
	status, body := post(t, u+"/tenant/evil/user/u-evil-2/register_user", `{"username":"carol","email":"d@evil.example"}`)
	if status != http.StatusConflict || !strings.Contains(string(body), "taken") {
		t.Fatalf("second carol in evil: %d %s", status, body)
	}
	// Concurrent registrations of one name in two tenants both succeed.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, tenant := range []string{"acme", "evil"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = post(t, u+"/tenant/"+tenant+"/user/u-dave-"+tenant+"/register_user", `{"username":"dave","email":"d@x.example"}`)
		}()
	}
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Fatalf("dave in acme and evil at once: %v", codes)
	}
}
