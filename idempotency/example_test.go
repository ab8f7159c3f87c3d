package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/factum-go/factum/idempotency"
)

func ExampleMemory() {
	ctx := context.Background()
	store, _ := idempotency.NewMemory(idempotency.MemoryConfig{})
	k := idempotency.Key{Tenant: "acme", Operation: "charge", Value: "req-42"}
	const fp = "sha256:body-of-req-42"

	rec, created, _ := store.Begin(ctx, k, fp)
	fmt.Println("first call owns the key:", created)
	_, _, err := store.Begin(ctx, k, fp)
	fmt.Println("duplicate while running:", errors.Is(err, idempotency.ErrInProgress))

	_ = store.Complete(ctx, k, fp, rec.Attempt, []byte("charged 10 EUR"))
	again, created, _ := store.Begin(ctx, k, fp)
	fmt.Printf("retry: created=%v replay=%q\n", created, again.Response)
	_, _, err = store.Begin(ctx, k, "sha256:another-body")
	fmt.Println("same key, other payload:", errors.Is(err, idempotency.ErrConflict))
	// Output:
	// first call owns the key: true
	// duplicate while running: true
	// retry: created=false replay="charged 10 EUR"
	// same key, other payload: true
}

func ExampleMiddleware() {
	store, _ := idempotency.NewMemory(idempotency.MemoryConfig{})
	mw, _ := idempotency.NewMiddleware(store, idempotency.MiddlewareOptions{Required: true})
	orders := 0
	mux := http.NewServeMux()
	mux.Handle("POST /orders", mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		orders++
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "order %d", orders)
	})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(key, body string) {
		req, _ := http.NewRequest("POST", srv.URL+"/orders", strings.NewReader(body))
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 400 {
			b = []byte(resp.Header.Get("Content-Type"))
		}
		fmt.Println(resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), string(b))
	}
	post("k-1", `{"sku":"a"}`)
	post("k-1", `{"sku":"a"}`) // a retry: replayed
	post("k-1", `{"sku":"b"}`) // the key reused for another order
	post("", `{"sku":"a"}`)    // no key
	// Output:
	// 201  order 1
	// 201 true order 1
	// 422  application/problem+json
	// 400  application/problem+json
}
