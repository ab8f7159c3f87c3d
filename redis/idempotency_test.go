package redis_test

import (
	"context"
	"testing"
	"time"

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

// TestIdempotencyGetJudgesStoredExpiry: Get applies the scripts' rule, a
// record is gone from its expiry millisecond on, even while Redis still
// holds the hash (Redis deletes it a millisecond later; here the hash is
// written to outlive its expiry by a second, so the instant cannot slip).
func TestIdempotencyGetJudgesStoredExpiry(t *testing.T) {
	ctx := context.Background()
	prefix := servicetest.UniquePrefix(t)
	c := openIdempotencyClient(t, prefix)
	s, err := redis.NewIdempotencyStore(c, redis.IdempotencyOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	k := idempotency.Key{Tenant: "t", Operation: "op", Value: "lapsed"}
	rk := prefix + "1:t:2:op:lapsed" // the store's layout: length-prefixed tenant and operation
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	e := now.UnixMilli()
	if err := c.HSet(ctx, rk, "s", "in_progress", "f", "fp", "a", "7", "e", e).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.PExpireAt(ctx, rk, time.UnixMilli(e+1000)).Err(); err != nil {
		t.Fatal(err)
	}
	if rec, found, err := s.Get(ctx, k); err != nil || found {
		t.Fatalf("Get of a record at or past its expiry = %+v, %v, %v; want nothing", rec, found, err)
	}
	// The scripts agree: the next Begin takes the key over.
	rec, created, err := s.Begin(ctx, k, "other")
	if err != nil || !created || rec.Attempt <= 7 {
		t.Fatalf("Begin after the expiry = %+v, %v, %v; want a takeover above attempt 7", rec, created, err)
	}
	// And a live record is found, as stored.
	if err := c.HSet(ctx, rk, "e", e+60_000).Err(); err != nil {
		t.Fatal(err)
	}
	if got, found, err := s.Get(ctx, k); err != nil || !found || got.Attempt != rec.Attempt || got.ExpiresAt.UnixMilli() != e+60_000 {
		t.Fatalf("Get of a live record = %+v, %v, %v", got, found, err)
	}
}
