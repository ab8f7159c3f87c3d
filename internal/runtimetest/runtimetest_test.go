package runtimetest_test

import (
	"testing"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/runtimetest"
	"github.com/factum-go/factum/snapshot"
)

// The checks pass on the in-memory stores, kept across the restart as a
// database would keep them.
func TestCartServiceInMemory(t *testing.T) {
	stores := runtimetest.Stores{
		Events: eventstore.NewMemory(), Snapshots: snapshot.NewMemory(), Checkpoints: event.NewMemoryCheckpoints(),
		Close: func() error { return nil },
	}
	runtimetest.CartService(t, func(*testing.T) runtimetest.Stores { return stores })
}
