package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/prepare/preparetest"
)

// The pool holds 32 connections so that 32 goroutines never wait for one.
func BenchmarkPostgresPrepareRollback(b *testing.B) {
	backend, db := openPrepare(b, postgres.Options{MaxConns: 32}, postgres.PrepareOptions{})
	// Open the pool's connections before timing starts.
	var conns []interface{ Release() }
	for range 32 {
		c, err := db.Pool().Acquire(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			preparetest.BenchPrepareRollback(b, backend, g)
		})
	}
}
