package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/factum-go/factum/idempotency/idempotencytest"
	"github.com/factum-go/factum/sqlite"
)

// BenchmarkIdempotencyBeginComplete measures Begin+Complete pairs (two
// commits) at 1 and 32 goroutines, with both durability settings.
func BenchmarkIdempotencyBeginComplete(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		for _, g := range []int{1, 32} {
			b.Run(fmt.Sprintf("synchronous=%s/goroutines=%d", sync, g), func(b *testing.B) {
				db := openIdempotencyDB(b, sqlite.Options{Synchronous: sync})
				s, err := sqlite.NewIdempotencyStore(context.Background(), db, sqlite.IdempotencyOptions{})
				if err != nil {
					b.Fatal(err)
				}
				idempotencytest.BenchPairs(b, s, g)
			})
		}
	}
}
