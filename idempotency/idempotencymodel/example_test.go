package idempotencymodel_test

import (
	"testing"

	"github.com/factum-go/factum/idempotency"
	"github.com/factum-go/factum/idempotency/idempotencymodel"
	"pgregory.net/rapid"
)

// The memory store against the model; a backend's test does the same
// with its own constructor.
func TestMemoryAgainstModel(t *testing.T) {
	idempotencymodel.Check(t, func(rt *rapid.T) (idempotency.Store, func()) {
		s, err := idempotency.NewMemory(idempotency.MemoryConfig{})
		if err != nil {
			rt.Fatal(err)
		}
		return s, func() {}
	})
}

// A backend's test checks its store against the model with its own
// constructor, one empty store per rapid run. (Compiled, not run: it
// needs a test.)
func Example() {
	var t *testing.T // a test's t
	idempotencymodel.Check(t, func(rt *rapid.T) (idempotency.Store, func()) {
		s, _ := idempotency.NewMemory(idempotency.MemoryConfig{})
		return s, func() {}
	})
}
