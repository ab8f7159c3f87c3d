package snapshottest_test

import (
	"testing"

	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshot/snapshottest"
)

// A store proves the contract from one test; this is the memory store's.
// A store that is also a snapshot.Querier runs the query corpus too.
func ExampleRun() {
	_ = func(t *testing.T) {
		snapshottest.Run(t, func(t *testing.T) snapshot.Store {
			return snapshot.NewMemory()
		})
	}
}
