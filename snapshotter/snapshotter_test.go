package snapshotter

import (
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/snapshot"
)

func TestNewValidatesAndReportsStatesOnlyUnderAll(t *testing.T) {
	if _, err := New(Config{}); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("New without stores: %v, want IllegalArgument", err)
	}
	base := Config{Store: snapshot.NewMemory(), Events: eventstore.NewMemory(), Codec: codec.NewRegistry()}
	all, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	if all.States() == nil {
		t.Fatal("no state observer under the All strategy")
	}
	sparse := base
	sparse.Strategy = snapshot.VersionOffset(10)
	sn, err := New(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if sn.States() != nil {
		t.Fatal("a state observer under a sparse strategy: the processor would encode every state for nothing")
	}
}
