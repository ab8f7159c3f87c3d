package snapshot_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshot/snapshottest"
)

// The front end's generic fallbacks keep the whole contract: a backend of
// the three required methods alone is a complete query store.
func TestFallbacksContract(t *testing.T) {
	snapshottest.Run(t, func(t *testing.T) snapshot.Store {
		f, err := snapshot.New(snapshottest.Plain(snapshot.NewMemory().Backend()), snapshot.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	})
}

// A front end serving one bounded context refuses identities of another on
// every path, before its backend sees them.
func TestFrontRefusesOtherContexts(t *testing.T) {
	mem := snapshot.NewMemory()
	f, err := snapshot.NewBatch(batchOf{mem.Backend()}, snapshot.Config{Context: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	billing := factum.NamedAggregate{Context: "billing", Aggregate: "invoice"}
	id := billing.WithID("i-1")
	s := snapshot.Snapshot{AggregateID: id, Version: 1, State: json.RawMessage(`{}`)}
	_, saveErr := f.Save(ctx, s)
	_, loadErr := f.Load(ctx, id)
	_, findErr := f.Find(ctx, billing, query.Plan{Condition: query.All(), Limit: 1})
	_, countErr := f.Count(ctx, billing, query.All())
	_, batchErr := f.SaveBatch(ctx, []snapshot.Snapshot{s})
	for name, err := range map[string]error{
		"Save": saveErr, "Load": loadErr, "Find": findErr, "Count": countErr, "SaveBatch": batchErr,
	} {
		if !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s of another context: %v, want IllegalArgument", name, err)
		}
	}
	if _, err := mem.Load(ctx, id); !errors.Is(err, factum.ErrNotFound) {
		t.Fatalf("a refused save reached the backend: %v", err)
	}
	if _, err := snapshot.New(nil, snapshot.Config{}); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("New(nil): %v, want IllegalArgument", err)
	}
	if _, err := snapshot.NewBatch(plainBackend{mem.Backend()}, snapshot.Config{}); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("NewBatch of a backend without batches: %v, want IllegalArgument", err)
	}
}

// batchOf gives the memory backend a batch save: each snapshot in turn,
// which keeps the reports (not the atomicity) of the contract.
type batchOf struct{ snapshot.Backend }

func (b batchOf) SaveBatch(ctx context.Context, snaps []snapshot.Snapshot) ([]bool, error) {
	saved := make([]bool, len(snaps))
	for i, s := range snaps {
		o, err := b.Backend.Save(ctx, s)
		if err != nil {
			return nil, err
		}
		saved[i] = o == snapshot.Saved
	}
	return saved, nil
}

// plainBackend is a backend with Backend's methods alone: no batches.
type plainBackend struct{ snapshot.Backend }

// The memory store offers no batch save of its own: a store that embeds
// it and overrides Save would otherwise have its saves bypassed by the
// snapshotter. Only the module's snapshotter, on the store itself, saves
// batches (SaveBatchAtEncoded).
func TestMemoryHasNoBatchSave(t *testing.T) {
	var st snapshot.Store = snapshot.NewMemory()
	if _, ok := st.(interface {
		SaveBatch(context.Context, []snapshot.Snapshot) ([]bool, error)
	}); ok {
		t.Fatal("the memory store has SaveBatch")
	}
}

// The batch front end runs the whole contract, the batch fast path held
// to Save by the kit.
func TestBatchFrontContract(t *testing.T) {
	snapshottest.Run(t, func(t *testing.T) snapshot.Store {
		f, err := snapshot.NewBatch(batchOf{snapshot.NewMemory().Backend()}, snapshot.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	})
}
