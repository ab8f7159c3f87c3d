package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// A command of one tenant naming another tenant's aggregate whose history
// does not load (an event that no longer decodes) is answered as for a
// missing aggregate: the history of another tenant is never read for it,
// so neither its failure nor its version, event names or identities reach
// the sender.
func TestCommandOnAnotherTenantsUnloadableAggregate(t *testing.T) {
	f := newFixture(t, nil)
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("p1").WithTenant("acme")
	for v, body := range []string{`{"sku":"sku-1","qty":1}`, `{"sku":"sku-1","qty":"many"}`} {
		s := &factum.EventStream{ID: factum.NewID(), AggregateID: id, Version: v + 1, CommandID: "cmd-acme-" + string(rune('1'+v)),
			RequestID: "req-acme-" + string(rune('1'+v)), CreateTime: time.Now(),
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: []byte(body)}}}
		if err := f.rt.Store().Append(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ method, path, body string }{
		{"DELETE", "", ""},
		{"PUT", "/recover", ""},
		{"POST", "/remove_item", `{"sku":"sku-1"}`},
		{"POST", "/add_item", `{"sku":"sku-1","qty":1}`},
	} {
		t.Run(c.method+c.path, func(t *testing.T) {
			r := f.do(t, c.method, "/tenant/evil/cart/p1"+c.path, c.body, "Command-Request-Id", "req-evil")
			e := wantError(t, r, http.StatusNotFound, factum.CodeNotFound)
			for _, leak := range []string{"acme", "item_added", "cmd-acme", "req-acme", "version"} {
				if strings.Contains(string(r.body), leak) {
					t.Fatalf("answer names %q of another tenant's aggregate: %s", leak, r.body)
				}
			}
			if e.Version != 0 || e.AggregateID.TenantOrDefault() != "evil" {
				t.Fatalf("answer %+v, want the request's identity only", e)
			}
		})
	}
}
