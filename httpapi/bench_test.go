package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum/httpapi"
)

// BenchmarkCommand measures one add_item through the handler up to
// PROCESSED on the memory store, without a network: the cost the HTTP layer
// adds to the runtime (routing, headers, body decoding, result encoding).
func BenchmarkCommand(b *testing.B) {
	f := newFixture(b, nil)
	h := f.srv.Config.Handler
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			req := httptest.NewRequest("POST", fmt.Sprintf("/cart/b-%d/add_item", i/10), strings.NewReader(fmt.Sprintf(`{"sku":"sku-%d","qty":1}`, i%3+1)))
			req.Header.Set(httpapi.HeaderRequestID, fmt.Sprintf("r-%d", i))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
}

// BenchmarkState measures GET …/state of a 10-version cart folded from the
// memory store.
func BenchmarkState(b *testing.B) {
	f := newFixture(b, nil)
	h := f.srv.Config.Handler
	for i := range 10 {
		req := httptest.NewRequest("POST", "/cart/c1/add_item", strings.NewReader(fmt.Sprintf(`{"sku":"sku-%d","qty":1}`, i%3+1)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/cart/c1/state", nil))
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
