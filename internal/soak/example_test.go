package soak_test

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum/internal/crashtest"
	"github.com/factum-go/factum/internal/soak"
)

// Run the mix against a service for a minute. (Compiled, not run: it needs
// a running service.)
func ExampleMix() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := crashtest.NewClient("http://127.0.0.1:8080", 30*time.Second)
	counts := soak.Mix(ctx, c, 8, 1, []string{"apple"})
	ops, failed, _ := counts.Snapshot()
	fmt.Println(ops, failed)
}
