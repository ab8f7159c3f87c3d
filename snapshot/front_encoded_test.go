package snapshot_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/snapshot"
)

// SaveEncoded skips only the JSON check of the state: it refuses what Save
// refuses otherwise, and saves as Save does.
func TestSaveEncodedChecksAllButTheStatesJSON(t *testing.T) {
	ctx := context.Background()
	m := snapshot.NewMemory()
	id := factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "shop", Aggregate: "cart"}, ID: "c1"}
	good := snapshot.Snapshot{AggregateID: id, Version: 1, EventID: "e1", EventTime: time.Now(), State: []byte(`{"n":1}`)}
	for name, mutate := range map[string]func(*snapshot.Snapshot){
		"version 0":   func(s *snapshot.Snapshot) { s.Version = 0 },
		"no state":    func(s *snapshot.Snapshot) { s.State = nil },
		"bad id":      func(s *snapshot.Snapshot) { s.AggregateID.ID = "" },
		"long opname": func(s *snapshot.Snapshot) { s.Operator = string(make([]byte, snapshot.MaxOperatorLen+1)) },
	} {
		s := good
		mutate(&s)
		if _, err := m.SaveEncoded(ctx, s, built.EncodedState{}); factum.CodeOf(err) != factum.CodeIllegalArgument {
			t.Errorf("%s: %v, want IllegalArgument", name, err)
		}
	}
	stored, err := m.SaveEncoded(ctx, good, built.EncodedState{})
	if err != nil || !stored {
		t.Fatalf("SaveEncoded: %v, %v; want stored", stored, err)
	}
	got, err := m.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 || string(got.State) != `{"n":1}` || got.AggregateID.Tenant != id.TenantOrDefault() {
		t.Fatalf("loaded %+v, want version 1 with the state and the tenant explicit", got)
	}
	if stored, err := m.SaveEncoded(ctx, snapshot.Snapshot{AggregateID: id, Version: 0}, built.EncodedState{}); stored || err == nil {
		t.Fatalf("an invalid snapshot after a save: %v, %v", stored, err)
	}
}
