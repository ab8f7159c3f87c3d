package snapshot_test

import (
	"testing"

	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshot/snapshottest"
)

func TestMemoryContract(t *testing.T) {
	shared := snapshot.NewMemory()
	t.Run("shared", func(t *testing.T) {
		snapshottest.Run(t, func(*testing.T) snapshot.Store { return shared })
	})
	t.Run("fresh", func(t *testing.T) {
		snapshottest.Run(t, func(*testing.T) snapshot.Store { return snapshot.NewMemory() })
	})
}
