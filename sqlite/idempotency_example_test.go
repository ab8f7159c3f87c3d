package sqlite_test

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/sqlite"
)

func ExampleNewIdempotencyStore() {
	ctx := context.Background()
	db, done := openExample(ctx)
	defer done()
	store, err := sqlite.NewIdempotencyStore(ctx, db, sqlite.IdempotencyOptions{
		Policy: idempotency.Policy{Lease: 30 * time.Second, Retention: 24 * time.Hour},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	k := idempotency.Key{Tenant: "acme", Operation: "POST /orders", Value: "req-7"}
	rec, created, _ := store.Begin(ctx, k, "fp-1")
	fmt.Println("owner:", created, "attempt:", rec.Attempt)
	_ = store.Complete(ctx, k, "fp-1", rec.Attempt, []byte(`{"order":"o-1"}`))
	again, created, _ := store.Begin(ctx, k, "fp-1")
	fmt.Printf("retry: owner=%v state=%s response=%s\n", created, again.State, again.Response)
	// Output:
	// owner: true attempt: 1
	// retry: owner=false state=done response={"order":"o-1"}
}
