package snapshotter

import (
	"context"
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

// wrappedStore overrides Save, as a user's wrapper adding its own checks
// does; the methods of the memory store it embeds are promoted into it.
type wrappedStore struct{ *snapshot.Memory }

func (w wrappedStore) Save(ctx context.Context, s snapshot.Snapshot) (bool, error) {
	return w.Memory.Save(ctx, s)
}

// The executor's states skip the store's JSON check only with a store that
// declares SaveEncoded itself: a wrapper whose promoted SaveEncoded would
// bypass its own Save gets every save through Save.
func TestEncodedStatesOnlyThroughTheStoresOwnMethod(t *testing.T) {
	events, reg := eventstore.NewMemory(), codec.NewRegistry()
	mem := snapshot.NewMemory()
	for _, c := range []struct {
		name      string
		cfg       Config
		unchecked bool
	}{
		{"memory", Config{Store: mem, Events: events, Codec: reg}, true},
		{"wrapper", Config{Store: wrappedStore{mem}, Events: events, Codec: reg}, false},
		{"pointer to wrapper", Config{Store: &wrappedStore{mem}, Events: events, Codec: reg}, false},
		{"every 2nd version", Config{Store: mem, Events: events, Codec: reg, Strategy: snapshot.VersionOffset(2)}, false},
	} {
		sn, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := sn.encoded != nil; got != c.unchecked {
			t.Errorf("%s: saves the executor's states by SaveEncoded: %v, want %v", c.name, got, c.unchecked)
		}
		if got := sn.encBatch != nil; got != c.unchecked {
			t.Errorf("%s: saves batches of the executor's states by SaveBatchAtEncoded: %v, want %v", c.name, got, c.unchecked)
		}
		if got := sn.next != nil; got != c.unchecked {
			t.Errorf("%s: saves the executor's states by SaveEncodedNext: %v, want %v", c.name, got, c.unchecked)
		}
	}
}
