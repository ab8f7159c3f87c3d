package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The example service runs the order saga, the user registration with a
// reserved username and the Idempotency-Key middleware.
func TestServeExampleDomains(t *testing.T) {
	s := startTestServer(t, t.TempDir())
	if code, body := post(t, s.URL+"/inventory/apple/restock", `{"qty":2}`); code != http.StatusOK {
		t.Fatalf("restock: %d %s", code, body)
	}
	if code, body := post(t, s.URL+"/order/o-1/place_order", `{"sku":"apple","qty":2}`); code != http.StatusOK {
		t.Fatalf("place order: %d %s", code, body)
	}
	if code, body := post(t, s.URL+"/order/o-2/place_order", `{"sku":"apple","qty":1}`); code != http.StatusOK {
		t.Fatalf("place order: %d %s", code, body)
	}
	for _, want := range []struct{ id, status string }{{"o-1", `"confirmed"`}, {"o-2", `"rejected"`}} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, body := get(t, s.URL+"/order/"+want.id+"/state")
			if strings.Contains(string(body), want.status) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("order %s: %s, want status %s", want.id, body, want.status)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	if code, body := post(t, s.URL+"/user/u-1/register_user", `{"username":"alice","email":"a@example.com"}`); code != http.StatusOK {
		t.Fatalf("register: %d %s", code, body)
	}
	code, body := post(t, s.URL+"/user/u-2/register_user", `{"username":"alice","email":"b@example.com"}`)
	if code != http.StatusConflict || !strings.Contains(string(body), `"IllegalState"`) || !strings.Contains(string(body), "taken") {
		t.Fatalf("second registration of a username: %d %s", code, body)
	}

	first, firstBody := post(t, s.URL+"/cart/c-1/add_item", `{"sku":"sku-1","qty":1}`, "Idempotency-Key", "k-1")
	req, _ := http.NewRequest("POST", s.URL+"/cart/c-1/add_item", strings.NewReader(`{"sku":"sku-1","qty":1}`))
	req.Header.Set("Idempotency-Key", "k-1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if first != http.StatusOK || res.StatusCode != http.StatusOK || res.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("idempotent replay: first %d %s, second %d %v", first, firstBody, res.StatusCode, res.Header)
	}
	if code, _ := post(t, s.URL+"/cart/c-1/add_item", `{"sku":"sku-2","qty":1}`, "Idempotency-Key", "k-1"); code != http.StatusUnprocessableEntity {
		t.Fatalf("same key, other payload: %d, want 422", code)
	}
	_, state := get(t, s.URL+"/cart/c-1/state")
	if !strings.Contains(string(state), `"version":1`) {
		t.Fatalf("the replayed command ran twice: %s", state)
	}
}
