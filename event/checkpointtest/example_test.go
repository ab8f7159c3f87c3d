package checkpointtest_test

import (
	"testing"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/event/checkpointtest"
)

// A checkpoint store proves the contract from one test; this is the
// in-memory store's.
func ExampleRun() {
	_ = func(t *testing.T) {
		checkpointtest.Run(t, func(*testing.T) event.CheckpointStore { return event.NewMemoryCheckpoints() })
	}
}
