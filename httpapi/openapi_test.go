package httpapi_test

import (
	"encoding/json"
	"testing"
)

func TestOpenAPI(t *testing.T) {
	f := snapshotFixture(t)
	r := f.do(t, "GET", "/openapi.json", "")
	wantOK(t, r)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
		Comps   struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	for _, p := range []struct{ path, method string }{
		{"/cart/{id}/add_item", "post"},
		{"/cart/{id}/remove_item", "post"},
		{"/cart/{id}/delete_aggregate", "post"},
		{"/cart/{id}/state", "get"},
		{"/cart/{id}/state/{version}", "get"},
		{"/cart/{id}/state/time/{time}", "get"},
		{"/cart/{id}/event/{from}/{to}", "get"},
		{"/cart/{id}/request/{requestId}", "get"},
		{"/cart/{id}", "delete"},
		{"/cart/{id}/recover", "put"},
		{"/tenant/{tenant}/cart/{id}/add_item", "post"},
		{"/tenant/{tenant}/cart/{id}/state", "get"},
		{"/healthz", "get"},
		{"/cart/{id}/snapshot", "get"},
		{"/cart/snapshot/paged/state", "post"},
		{"/tenant/{tenant}/cart/snapshot/count", "post"},
	} {
		if _, ok := doc.Paths[p.path][p.method]; !ok {
			t.Errorf("no %s %s", p.method, p.path)
		}
	}
	props := func(name string) map[string]any {
		t.Helper()
		s, ok := doc.Comps.Schemas[name]
		if !ok {
			t.Fatalf("no schema %s", name)
		}
		p, _ := s["properties"].(map[string]any)
		return p
	}
	if qty, _ := props("add_item")["qty"].(map[string]any); qty["type"] != "integer" {
		t.Errorf("add_item.qty %v, want integer", qty)
	}
	if sku, _ := props("item_added")["sku"].(map[string]any); sku["type"] != "string" {
		t.Errorf("item_added.sku %v, want string", sku)
	}
	items, _ := props("shop.cart.state")["items"].(map[string]any)
	if add, _ := items["additionalProperties"].(map[string]any); add["type"] != "integer" {
		t.Errorf("state items %v, want a map of integers", items)
	}
	for _, name := range []string{"cart_cleared", "aggregate_deleted", "Error", "CommandResult", "EventStream"} {
		if _, ok := doc.Comps.Schemas[name]; !ok {
			t.Errorf("no schema %s", name)
		}
	}
}
