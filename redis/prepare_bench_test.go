package redis_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparetest"
	goredis "github.com/redis/go-redis/v9"
)

// The pool holds 64 connections so that 32 goroutines never wait for one.
// scripts/bench-prepare-redis.sh compares BenchmarkRedisPrepare with
// redis-benchmark's SET NX PX at the same client count.

func BenchmarkRedisPrepareRollback(b *testing.B) {
	benchPrepare(b, preparetest.BenchPrepareRollback)
}

func BenchmarkRedisPrepare(b *testing.B) {
	benchPrepare(b, preparetest.BenchPrepare)
}

// benchPrepare runs bench on a backend whose pool is warm, with 1 and with
// 32 goroutines.
func benchPrepare(b *testing.B, bench func(*testing.B, prepare.Backend, int)) {
	backend, client, _ := openPrepare(b, 64)
	warm(b, client, 64)
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) { bench(b, backend, g) })
	}
}

// warm opens n pooled connections before timing starts, so that connection
// set-up is not measured.
func warm(b *testing.B, client *goredis.Client, n int) {
	b.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := client.Ping(context.Background()).Err(); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
}
