package event_test

import (
	"testing"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/event/checkpointtest"
)

func TestMemoryCheckpointsContract(t *testing.T) {
	checkpointtest.Run(t, func(*testing.T) event.CheckpointStore { return event.NewMemoryCheckpoints() })
}
