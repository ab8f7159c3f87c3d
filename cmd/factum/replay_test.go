package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/factum-go/factum/httpapi"
	"github.com/factum-go/factum/idempotency"
)

// TestIdempotencyReplayKeepsCommandHeaders: a replayed answer names the
// command, request, aggregate and version as the first answer did.
func TestIdempotencyReplayKeepsCommandHeaders(t *testing.T) {
	s := startTestServer(t, t.TempDir())
	send := func() http.Header {
		t.Helper()
		req, err := http.NewRequest("POST", s.URL+"/cart/cart-r/add_item", strings.NewReader(`{"sku":"sku-1","qty":1}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(idempotency.HeaderKey, "key-replay-1")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("status %d", res.StatusCode)
		}
		return res.Header
	}
	first, again := send(), send()
	if again.Get(idempotency.HeaderReplayed) != "true" {
		t.Fatalf("second answer is not a replay: %v", again)
	}
	for _, h := range httpapi.CommandResponseHeaders() {
		if first.Get(h) == "" || again.Get(h) != first.Get(h) {
			t.Errorf("%s: first %q, replay %q", h, first.Get(h), again.Get(h))
		}
	}
}
