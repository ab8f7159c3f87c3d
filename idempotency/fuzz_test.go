package idempotency_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum/idempotency"
)

// FuzzFingerprint: the default fingerprint is deterministic and tells
// apart requests that differ in method, path or body.
func FuzzFingerprint(f *testing.F) {
	f.Add("POST", "/cart/c-1/add_item", []byte(`{"qty":1}`), "POST", "/cart/c-1/add_item", []byte(`{"qty":2}`))
	f.Add("POST", "/a", []byte("b"), "POST", "/ab", []byte(""))
	f.Add("POST", "/a?x=1", []byte(""), "POST", "/a?x=2", []byte(""))
	f.Add("PUT", "/a", []byte{0}, "PUT", "/a\x00", []byte{})
	f.Fuzz(func(t *testing.T, m1, p1 string, b1 []byte, m2, p2 string, b2 []byte) {
		r1, err1 := http.NewRequest(m1, "http://x/"+url.PathEscape(p1), nil)
		r2, err2 := http.NewRequest(m2, "http://x/"+url.PathEscape(p2), nil)
		if err1 != nil || err2 != nil {
			return
		}
		fp1, err := idempotency.DefaultFingerprint(r1, b1)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := idempotency.DefaultFingerprint(r1, b1)
		if fp1 != again {
			t.Fatalf("fingerprint is not deterministic: %s %s", fp1, again)
		}
		if err := idempotency.ValidateFingerprint(fp1); err != nil {
			t.Fatalf("default fingerprint %q is refused by ValidateFingerprint: %v", fp1, err)
		}
		fp2, _ := idempotency.DefaultFingerprint(r2, b2)
		same := r1.Method == r2.Method && r1.URL.RequestURI() == r2.URL.RequestURI() && bytes.Equal(b1, b2)
		if same != (fp1 == fp2) {
			t.Fatalf("requests %s %s %q and %s %s %q: same=%v but fingerprints %s, %s", r1.Method, r1.URL.RequestURI(), b1, r2.Method, r2.URL.RequestURI(), b2, same, fp1, fp2)
		}
	})
}

// FuzzMiddlewareKey: any Idempotency-Key header and pair of bodies is
// answered without a 5xx; an accepted key runs the handler once, replays
// the same body for the same payload and answers 422 for another payload.
func FuzzMiddlewareKey(f *testing.F) {
	f.Add("k-1", []byte(`{"a":1}`), []byte(`{"a":1}`))
	f.Add("k-1", []byte(`{"a":1}`), []byte(`{"a":2}`))
	f.Add(`"quoted\"key"`, []byte(""), []byte(""))
	f.Add(`"bad\key"`, []byte("x"), []byte("x"))
	f.Add("", []byte("x"), []byte("y"))
	f.Add("k\x00", []byte("x"), []byte("x"))
	f.Add("k\u00e9", []byte("x"), []byte("x"))
	f.Fuzz(func(t *testing.T, key string, body1, body2 []byte) {
		_, mw := newMiddleware(t, idempotency.Policy{}, idempotency.MiddlewareOptions{})
		var calls atomic.Int32
		h := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := calls.Add(1)
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/octet-stream")
			w.WriteHeader(http.StatusCreated)
			w.Write(append([]byte{byte(n)}, b...))
		}))
		send := func(body []byte) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, "http://x/orders", bytes.NewReader(body))
			req.Header.Set(idempotency.HeaderKey, key)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		first := send(body1)
		if first.Code >= 500 {
			t.Fatalf("key %q: HTTP %d %s", key, first.Code, first.Body)
		}
		if first.Code != http.StatusCreated {
			if first.Code != http.StatusBadRequest || calls.Load() != 0 {
				t.Fatalf("key %q: HTTP %d after %d handler calls, want 201, or 400 without a call", key, first.Code, calls.Load())
			}
			return
		}
		second := send(body2)
		switch {
		case bytes.Equal(body1, body2):
			if second.Code != http.StatusCreated || !bytes.Equal(second.Body.Bytes(), first.Body.Bytes()) || second.Header().Get(idempotency.HeaderReplayed) != "true" {
				t.Fatalf("key %q, same payload: HTTP %d %q (replayed %q), want the first answer %q replayed",
					key, second.Code, second.Body, second.Header().Get(idempotency.HeaderReplayed), first.Body)
			}
		default:
			if second.Code != http.StatusUnprocessableEntity {
				t.Fatalf("key %q, another payload: HTTP %d, want 422", key, second.Code)
			}
		}
		if calls.Load() != 1 {
			t.Fatalf("key %q: handler ran %d times", key, calls.Load())
		}
	})
}
