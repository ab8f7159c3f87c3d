package postgres_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/postgres"
)

// A PostgreSQL-backed Idempotency-Key middleware, with expired records
// purged every minute. It needs a running server, so this example is
// compiled but not run.
func ExampleNewIdempotencyStore() {
	ctx := context.Background()
	db := openExample(ctx)
	defer db.Close()
	store, err := postgres.NewIdempotencyStore(ctx, db, postgres.IdempotencyOptions{
		Policy: idempotency.Policy{Lease: time.Minute, Retention: 24 * time.Hour},
	})
	if err != nil {
		log.Fatal(err)
	}
	go idempotency.RunPurger(ctx, store, time.Minute, func(err error) { log.Print(err) })

	mw, err := idempotency.NewMiddleware(store, idempotency.MiddlewareOptions{Required: true})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /orders", mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	})))
	log.Fatal(http.ListenAndServe(":8080", mux))
}
