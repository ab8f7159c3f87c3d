package aggregate_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
)

// FoldTyped folds onto the typed state it returned last, without decoding
// the stored state, and otherwise decodes; the results match Fold's.
func TestFoldTyped(t *testing.T) {
	store := eventstore.NewMemory()
	id := accounts.ID("typed")
	p := newProc(t, store, aggregate.ExecutorConfig{})
	depositTimes(t, p, id, 4, 10)
	streams, err := store.Load(context.Background(), id, 1, eventstore.MaxVersion)
	if err != nil || len(streams) != 4 {
		t.Fatal(len(streams), err)
	}
	reg := codec.NewRegistry()
	if err := accounts.Register(reg); err != nil {
		t.Fatal(err)
	}
	zero := aggregate.StoredState{ID: id.WithTenant(factum.DefaultTenant)}

	st2, typed, err := accounts.FoldTyped(reg, zero, aggregate.Typed{}, streams[:2])
	if err != nil || string(st2.State) != `{"Balance":20}` {
		t.Fatalf("fold from nothing: %s %v", st2.State, err)
	}
	// Damage the stored form: a fold that decoded it would fail, so
	// success shows the typed state was used.
	damaged := st2
	damaged.State = json.RawMessage(`{not json`)
	st3, typed, err := accounts.FoldTyped(reg, damaged, typed, streams[2:3])
	if err != nil || string(st3.State) != `{"Balance":30}` || st3.Version != 3 {
		t.Fatalf("fold onto the typed state: %s v%d %v", st3.State, st3.Version, err)
	}
	// A typed state of another version is not used: the stored one is.
	claimed := aggregate.StoredState{ID: st3.ID, Version: 3, State: json.RawMessage(`{"Balance":1000}`)}
	if _, _, err := accounts.FoldTyped(reg, st2, typed, streams[2:3]); err != nil {
		t.Fatalf("fold onto version 2: %v", err)
	}
	st4, _, err := accounts.FoldTyped(reg, claimed, aggregate.Typed{}, streams[3:])
	if err != nil || string(st4.State) != `{"Balance":1010}` {
		t.Fatalf("fold from a stored state: %s %v", st4.State, err)
	}
	want, err := accounts.Fold(reg, zero, streams)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := accounts.FoldTyped(reg, zero, aggregate.Typed{}, streams)
	if err != nil || string(got.State) != string(want.State) || got.Version != want.Version {
		t.Fatalf("FoldTyped %s v%d, Fold %s v%d (%v)", got.State, got.Version, want.State, want.Version, err)
	}
	if _, _, err := accounts.FoldTyped(reg, st2, aggregate.Typed{}, streams[3:]); !errors.Is(err, factum.ErrSourcingVersionConflict) {
		t.Fatalf("fold with a gap: %v", err)
	}
}
