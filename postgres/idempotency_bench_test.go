package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/factum-go/factum/idempotency/idempotencytest"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/postgres"
)

// BenchmarkIdempotencyBeginComplete measures Begin+Complete pairs (two
// durable commits) at 1 and 32 goroutines, with as many pool connections
// as goroutines.
func BenchmarkIdempotencyBeginComplete(b *testing.B) {
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			url, schema := servicetest.PostgresSchema(b)
			db, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema, MaxConns: int32(g)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(db.Close)
			s, err := postgres.NewIdempotencyStore(context.Background(), db, postgres.IdempotencyOptions{})
			if err != nil {
				b.Fatal(err)
			}
			idempotencytest.BenchPairs(b, s, g)
		})
	}
}
