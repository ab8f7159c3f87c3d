package memory_test

import (
	"testing"

	"github.com/factum-go/factum/engine/storagetest"
	"github.com/factum-go/factum/memory"
)

func TestStorageContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) (storagetest.Storage, func()) {
		s := memory.New()
		return s, func() { _ = s.Close() }
	})
}

// The zero Storage answers errors instead of panicking.
func TestTheZeroStorageRefuses(t *testing.T) {
	var s memory.Storage
	if _, err := s.EventStore(t.Context(), "shop"); err == nil {
		t.Fatal("the zero Storage served an event store")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
