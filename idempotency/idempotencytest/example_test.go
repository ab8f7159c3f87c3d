package idempotencytest_test

import (
	"testing"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencytest"
)

// A backend proves the contract from one test; this is the memory store's.
func ExampleRun() {
	_ = func(t *testing.T) {
		idempotencytest.Run(t, func(t *testing.T, p idempotency.Policy) idempotency.Store {
			s, err := idempotency.NewMemory(idempotency.MemoryConfig{Policy: p})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	}
}
