package redis_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencymodel"
	"github.com/factum-go/factum/internal/servicetest"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparemodel"
	"github.com/factum-go/factum/redis"
	"pgregory.net/rapid"
)

// The Redis prepare backend and idempotency store against their models,
// under a fresh key prefix per rapid run on the shared server.
func TestPrepareAndIdempotencyAgainstModels(t *testing.T) {
	client, err := redis.Open(context.Background(), servicetest.RedisURL(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	t.Run("prepare", func(t *testing.T) {
		preparemodel.Check(t, func(rt *rapid.T) (prepare.Backend, func()) {
			prefix := servicetest.UniquePrefix(t) + "model:"
			b, err := redis.NewPrepareBackend(client, redis.PrepareOptions{Prefix: prefix})
			if err != nil {
				rt.Fatal(err)
			}
			return b, func() { deletePrefix(t, client, prefix) }
		})
	})
	t.Run("idempotency", func(t *testing.T) {
		idempotencymodel.Check(t, func(rt *rapid.T) (idempotency.Store, func()) {
			prefix := servicetest.UniquePrefix(t) + "model:"
			s, err := redis.NewIdempotencyStore(client, redis.IdempotencyOptions{Prefix: prefix})
			if err != nil {
				rt.Fatal(err)
			}
			return s, func() { deletePrefix(t, client, prefix) }
		})
	})
}
