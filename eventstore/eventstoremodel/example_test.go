package eventstoremodel_test

import (
	"testing"

	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoremodel"
	"pgregory.net/rapid"
)

// The memory store against the model; a backend's test does the same
// with its own constructor.
func TestMemoryAgainstModel(t *testing.T) {
	eventstoremodel.Check(t, func(*rapid.T) (eventstore.Store, func()) {
		return eventstore.NewMemory(), func() {}
	})
}

// A backend's test checks its store against the model with its own
// constructor, one empty store per rapid run. (Compiled, not run: it
// needs a test.)
func Example() {
	var t *testing.T // a test's t
	eventstoremodel.Check(t, func(*rapid.T) (eventstore.Store, func()) {
		return eventstore.NewMemory(), func() {}
	})
}
