package event_test

import (
	"testing"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/event/leasetest"
)

type memoryLeases struct {
	*event.MemoryLeases
	*event.MemoryCheckpoints
}

func TestMemoryLeasesContract(t *testing.T) {
	leasetest.Run(t, func(t *testing.T) leasetest.Store {
		cps := event.NewMemoryCheckpoints()
		return memoryLeases{event.NewMemoryLeases(cps), cps}
	})
}
