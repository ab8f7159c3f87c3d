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
