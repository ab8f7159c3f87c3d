package preparemodel_test

import (
	"testing"
	"time"

	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/prepare/preparemodel"
	"pgregory.net/rapid"
)

// The memory backend against the model; a backend's test does the same
// with its own constructor.
func TestMemoryAgainstModel(t *testing.T) {
	preparemodel.Check(t, func(*rapid.T) (prepare.Backend, func()) {
		return prepare.NewMemory(time.Now), func() {}
	})
}
