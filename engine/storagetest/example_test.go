package storagetest_test

import (
	"testing"

	"github.com/factum-go/factum/engine/storagetest"
	"github.com/factum-go/factum/memory"
)

// A backend proves the contract from one test; this is the memory
// storage's (memory's own test runs it).
func ExampleRun() {
	_ = func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) (storagetest.Storage, func()) {
			s := memory.New()
			return s, func() { _ = s.Close() }
		})
	}
}
