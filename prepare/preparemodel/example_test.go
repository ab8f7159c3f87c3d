package preparemodel_test

import (
	"testing"

	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparemodel"
	"pgregory.net/rapid"
)

// The memory backend against the model; a backend's test does the same
// with its own constructor.
func TestMemoryAgainstModel(t *testing.T) {
	preparemodel.Check(t, func(*rapid.T) (prepare.Backend, func()) {
		return prepare.NewMemory(prepare.MemoryConfig{}), func() {}
	})
}

// A backend's test checks it against the model with its own constructor,
// one empty backend per rapid run. (Compiled, not run: it needs a test.)
func Example() {
	var t *testing.T // a test's t
	preparemodel.Check(t, func(*rapid.T) (prepare.Backend, func()) {
		return prepare.NewMemory(prepare.MemoryConfig{}), func() {}
	})
}
