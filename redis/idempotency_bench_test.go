package redis_test

import (
	"fmt"
	"testing"

	"github.com/factum-go/factum/idempotency/idempotencytest"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/redis"
)

// BenchmarkIdempotencyBeginComplete measures Begin+Complete pairs (two
// script calls, two round trips) at 1 and 32 goroutines.
func BenchmarkIdempotencyBeginComplete(b *testing.B) {
	prefix := servicetest.UniquePrefix(b)
	c := openIdempotencyClient(b, prefix)
	s, err := redis.NewIdempotencyStore(c, redis.IdempotencyOptions{Prefix: prefix})
	if err != nil {
		b.Fatal(err)
	}
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) { idempotencytest.BenchPairs(b, s, g) })
	}
}
