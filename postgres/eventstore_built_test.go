package postgres

import (
	"testing"

	"github.com/factum-go/factum/internal/built"
)

// The executor appends its own streams to the store by AppendBuilt: the
// store declares the method its own (built.Of).
func TestEventStoreAppendsBuiltStreams(t *testing.T) {
	st := newTestEventStore(t, newTestDB(t, 2), "kit", EventStoreOptions{})
	if built.Of(st) == nil {
		t.Fatal("the store does not append built streams")
	}
}
