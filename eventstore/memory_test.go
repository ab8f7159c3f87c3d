package eventstore_test

import (
	"testing"

	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoretest"
)

func TestMemoryContract(t *testing.T) {
	eventstoretest.Run(t, func(t *testing.T) eventstore.Store { return eventstore.NewMemory() })
}
