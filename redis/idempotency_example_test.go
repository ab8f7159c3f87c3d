package redis_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/redis"
)

// A worker that runs a job at most once per key, with its lease renewed
// while it works. It needs a running server, so this example is compiled
// but not run.
func ExampleNewIdempotencyStore() {
	ctx := context.Background()
	client, err := redis.Open(ctx, "redis://127.0.0.1:6379/0", 0)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	store, err := redis.NewIdempotencyStore(client, redis.IdempotencyOptions{
		Policy: idempotency.Policy{Lease: 30 * time.Second, Retention: 24 * time.Hour},
	})
	if err != nil {
		log.Fatal(err)
	}
	k := idempotency.Key{Tenant: "acme", Operation: "send-invoice", Value: "invoice-2026-0042"}
	rec, created, err := store.Begin(ctx, k, "invoice-2026-0042:v1")
	switch {
	case errors.Is(err, idempotency.ErrInProgress):
		return // another worker has it
	case err != nil:
		log.Fatal(err)
	case !created:
		log.Printf("already sent: %s", rec.Response)
		return
	}
	if _, err := store.Renew(ctx, k, "invoice-2026-0042:v1", rec.Attempt); err != nil {
		log.Fatal(err) // lost the key: stop working
	}
	if err := store.Complete(ctx, k, "invoice-2026-0042:v1", rec.Attempt, []byte("sent")); err != nil {
		log.Fatal(err)
	}
}
