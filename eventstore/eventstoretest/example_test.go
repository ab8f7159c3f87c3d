package eventstoretest_test

import (
	"testing"

	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoretest"
)

// A backend proves the contract from one test; this is the memory store's.
func ExampleRun() {
	_ = func(t *testing.T) {
		eventstoretest.Run(t, func(t *testing.T) eventstore.Store {
			return eventstore.NewMemory()
		})
	}
}
