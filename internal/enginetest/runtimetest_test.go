package enginetest_test

import (
	"testing"

	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/snapshot"
)

// The checks pass on the in-memory stores, kept across the restart as a
// database would keep them.
func TestCartServiceInMemory(t *testing.T) {
	stores := enginetest.Stores{
		Events: eventstore.NewMemory(), Snapshots: snapshot.NewMemory(), Checkpoints: event.NewMemoryCheckpoints(),
		Close: func() error { return nil },
	}
	enginetest.CartService(t, func(*testing.T) enginetest.Stores { return stores })
}
