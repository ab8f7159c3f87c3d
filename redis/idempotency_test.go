package redis_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencytest"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/redis"
	goredis "github.com/redis/go-redis/v9"
)

// openIdempotencyClient connects to the test server; the keys written under prefix
// are deleted when the test ends.
func openIdempotencyClient(t testing.TB, prefix string) *goredis.Client {
	t.Helper()
	c, err := redis.Open(context.Background(), servicetest.RedisURL(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		c.Close()
	})
	return c
}

func TestIdempotencyContract(t *testing.T) {
	prefix := servicetest.UniquePrefix(t)
	openIdempotencyClient(t, prefix) // deletes the keys when the test ends
	// Every store the kit asks for is a new instance with a client of its
	// own, as a second process would have. Redis runs each script alone
	// and offers no lock to hold, and its own clock judges expiry.
	idempotencytest.RunHarness(t, idempotencytest.Harness{
		New: func(t *testing.T, p idempotency.Policy) idempotency.Store {
			c, err := redis.Open(context.Background(), servicetest.RedisURL(t), 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			s, err := redis.NewIdempotencyStore(c, redis.IdempotencyOptions{Policy: p, Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	})
}
