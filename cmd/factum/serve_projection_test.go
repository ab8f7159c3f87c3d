package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/sqlite"
	"github.com/jackc/pgx/v5/stdlib"
)

// startPostgresServer runs the example service on a schema of its own in
// the shared PostgreSQL, stopped at cleanup.
func startPostgresServer(t *testing.T) *server {
	t.Helper()
	url, schema := servicetest.PostgresSchema(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	var log bytes.Buffer
	s, err := startServer(context.Background(), serveOptions{Addr: "127.0.0.1:0", storeOptions: storeOptions{PostgresURL: url + sep + "search_path=" + schema}}, &log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !s.stopped.Load() {
			stopServer(t, s)
		}
	})
	return s
}

var serveBackends = []struct {
	name  string
	start func(*testing.T) *server
}{
	{"SQLite", func(t *testing.T) *server { return startTestServer(t, t.TempDir()) }},
	{"PostgreSQL", startPostgresServer},
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

// readerOf returns a database/sql reader of the server's database.
func readerOf(t *testing.T, s *server) *sql.DB {
	t.Helper()
	switch db := s.store.storage.(type) {
	case *sqlite.DB:
		return db.Reader()
	case *postgres.DB:
		r := stdlib.OpenDBFromPool(db.Pool())
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	t.Fatalf("no SQL reader for %T", s.store.storage)
	return nil
}

// serve runs the order summaries projection: an order placed with a
// PROJECTED wait is in the summaries table when the answer arrives, in
// its tenant's rows only.
func TestServeProjectsOrderSummaries(t *testing.T) {
	for _, bk := range serveBackends {
		t.Run(bk.name, func(t *testing.T) {
			s := bk.start(t)
			db := readerOf(t, s)
			placeProjected(t, s, "acme", "o-1", "apple", 2)
			var sku, status string
			var qty int
			err := db.QueryRow(`SELECT sku, qty, status FROM `+order.SummariesTable+` WHERE tenant = $1 AND order_id = $2`, "acme", "o-1").Scan(&sku, &qty, &status)
			if err != nil || sku != "apple" || qty != 2 {
				t.Fatalf("right after PROJECTED: %q %d %q, %v", sku, qty, status, err)
			}
			err = db.QueryRow(`SELECT sku FROM `+order.SummariesTable+` WHERE tenant = $1 AND order_id = $2`, factum.DefaultTenant, "o-1").Scan(&sku)
			if !errors.Is(err, sql.ErrNoRows) {
				t.Fatalf("acme's order is in the default tenant's rows: %v", err)
			}
		})
	}
}
