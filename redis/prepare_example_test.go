package redis_test

import (
	"context"
	"log"
	"time"

	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/redis"
)

// A temporary reservation, such as a coupon held for a checkout, with
// Redis's own expiry. It needs a running server, so this example is
// compiled but not run.
func ExampleNewPrepareBackend() {
	ctx := context.Background()
	client, err := redis.Open(ctx, "redis://127.0.0.1:6379/0", 0)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	backend, err := redis.NewPrepareBackend(client, redis.PrepareOptions{})
	if err != nil {
		log.Fatal(err)
	}
	coupons, err := prepare.NewKey[string]("coupon", backend)
	if err != nil {
		log.Fatal(err)
	}
	held, err := coupons.Prepare(ctx, "SPRING-25", prepare.ExpiresIn("cart-42", 15*time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	_ = held // false: another cart holds the coupon for now
}
