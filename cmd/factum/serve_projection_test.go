package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/projection"
)

// startPostgresServer runs the example service on a schema of its own in
// the shared PostgreSQL, stopped at cleanup.
func startPostgresServer(t *testing.T) *server {
	t.Helper()
	s, _ := startStoreServer(t, storeOptions{PostgresURL: servicetest.PostgresSchemaURL(t)})
	return s
}

var serveBackends = []struct {
	name  string
	start func(*testing.T) *server
}{
	{"SQLite", func(t *testing.T) *server { return startTestServer(t, t.TempDir()) }},
	{"PostgreSQL", startPostgresServer},
	{"memory", startMemoryServer},
}

// startMemoryServer runs the example service with --memory (its
// projection in a temporary SQLite file), stopped at cleanup.
func startMemoryServer(t *testing.T) *server {
	t.Helper()
	s, _ := startStoreServer(t, storeOptions{Memory: true})
	return s
}

// placeProjected places an order in tenant over HTTP and waits for
// PROJECTED.
func placeProjected(t *testing.T, s *server, tenant, id, sku string, qty int) command.Result {
	t.Helper()
	status, b := post(t, s.URL+"/tenant/"+tenant+"/order/"+id+"/place_order",
		`{"sku":"`+sku+`","qty":`+itoa(qty)+`}`, httpapi.HeaderWaitStage, "PROJECTED")
	var res command.Result
	if status != http.StatusOK || json.Unmarshal(b, &res) != nil {
		t.Fatalf("place %s@%s: %d %s", id, tenant, status, b)
	}
	if res.Stage != factum.StageProjected || res.Code != factum.CodeOk {
		t.Fatalf("place %s@%s ended at %s (%s): %s", id, tenant, res.Stage, res.Code, b)
	}
	return res
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// queryRows asks the summaries' query over HTTP and returns its rows.
func queryRows(t *testing.T, base, query, params string) []map[string]any {
	t.Helper()
	status, b := get(t, base+"/shop/projection/"+order.SummariesName+"/"+query+"?"+params)
	var res projection.Result
	if status != http.StatusOK || json.Unmarshal(b, &res) != nil {
		t.Fatalf("query %s?%s: %d %s", query, params, status, b)
	}
	return res.Rows
}

// serve runs the order summaries projection and serves its queries: an
// order placed with a PROJECTED wait is in the query's answer as soon as
// the wait returns (read-after-write), in its tenant and no other, and the
// totals count it.
func TestServeProjectsOrderSummaries(t *testing.T) {
	for _, bk := range serveBackends {
		t.Run(bk.name, func(t *testing.T) {
			s := bk.start(t)
			acme, globex := s.URL+"/tenant/acme", s.URL+"/tenant/globex"
			for i, c := range []struct{ tenant, id, sku string }{
				{"acme", "o-1", "apple"}, {"acme", "o-2", "apple"}, {"globex", "g-1", "pear"},
			} {
				placeProjected(t, s, c.tenant, c.id, c.sku, i+1)
				rows := queryRows(t, s.URL+"/tenant/"+c.tenant, order.QueryOrder, "id="+c.id)
				if len(rows) != 1 || rows[0]["sku"] != c.sku || fmt.Sprint(rows[0]["qty"]) != fmt.Sprint(i+1) {
					t.Fatalf("right after PROJECTED, %s@%s reads %v", c.id, c.tenant, rows)
				}
			}
			if rows := queryRows(t, globex, order.QueryOrder, "id=o-1"); len(rows) != 0 {
				t.Fatalf("acme's order o-1 is visible to globex: %v", rows)
			}
			if rows := queryRows(t, s.URL, order.QueryOrders, ""); len(rows) != 0 {
				t.Fatalf("the default tenant sees other tenants' orders: %v", rows)
			}
			if rows := queryRows(t, globex, order.QueryOrders, ""); len(rows) != 1 || rows[0]["order_id"] != "g-1" {
				t.Fatalf("globex's orders: %v", rows)
			}
			// No stock was added: the saga rejects acme's orders, and the
			// totals follow; wait for it.
			deadline := time.Now().Add(30 * time.Second)
			for {
				rows := queryRows(t, acme, order.QueryTotals, "sku=apple")
				if len(rows) == 1 && rows[0]["status"] == string(order.Rejected) && fmt.Sprint(rows[0]["orders"]) == "2" && fmt.Sprint(rows[0]["qty"]) == "3" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("acme's apple totals: %v", rows)
				}
				time.Sleep(20 * time.Millisecond)
			}
			status, b := get(t, acme+"/shop/projection/"+order.SummariesName+"/"+order.QueryOrder)
			if status != http.StatusBadRequest {
				t.Fatalf("a query without its required parameter: %d %s", status, b)
			}
		})
	}
}
