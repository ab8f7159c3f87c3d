package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/factum-go/factum/internal/servicetest"
)

// serve on PostgreSQL keeps state across a restart, like the embedded
// default.
func TestServeOnPostgres(t *testing.T) {
	url := servicetest.PostgresSchemaURL(t)
	start := func() *server {
		var log bytes.Buffer
		s, err := startServer(context.Background(), serveOptions{Addr: "127.0.0.1:0", storeOptions: storeOptions{PostgresURL: url}}, &log)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "PostgreSQL") {
			t.Fatalf("start-up message %q does not say the data is in PostgreSQL", log.String())
		}
		return s
	}
	s := start()
	if code, body := post(t, s.URL+"/cart/c-1/add_item", `{"sku":"sku-1","qty":2}`, "Command-Request-Id", "r-1"); code != http.StatusOK {
		t.Fatalf("add item: %d %s", code, body)
	}
	stopServer(t, s)
	s = start()
	defer stopServer(t, s)
	code, body := get(t, s.URL+"/cart/c-1/state")
	if code != http.StatusOK || !strings.Contains(string(body), `"sku-1":2`) {
		t.Fatalf("state after restart: %d %s", code, body)
	}
	code, body = post(t, s.URL+"/cart/c-1/add_item", `{"sku":"sku-1","qty":2}`, "Command-Request-Id", "r-1")
	if code != http.StatusOK || !strings.Contains(string(body), `"duplicate":true`) {
		t.Fatalf("retry after restart: %d %s", code, body)
	}
}
