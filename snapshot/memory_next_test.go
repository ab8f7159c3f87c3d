package snapshot_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/snapshot"
)

// SaveEncodedNext continues the stored snapshot: it takes the stored first
// fields, saves only over a lower version, saves a first version over
// nothing, refuses another tenant's aggregate, and saves nothing when a
// later version has nothing stored to continue.
func TestSaveEncodedNextContinuesTheStoredSnapshot(t *testing.T) {
	ctx := context.Background()
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c1")
	first := time.UnixMilli(1_000).UTC()
	later := time.UnixMilli(9_000).UTC()
	snap := func(v int, firstOp string, firstTime time.Time) snapshot.Snapshot {
		return snapshot.Snapshot{AggregateID: id, Version: v, EventID: "e", FirstOperator: firstOp, FirstEventTime: firstTime,
			EventTime: later, State: []byte(`{"v":1}`)}
	}
	other := id
	other.Tenant = "other"
	cases := []struct {
		name      string
		stored    []snapshot.Snapshot
		save      snapshot.Snapshot
		saved     bool
		based     bool
		code      factum.Code
		wantVer   int    // stored version after; 0: none stored
		wantFirst string // stored FirstOperator after
	}{
		{name: "first version over nothing", save: snap(1, "alice", first), saved: true, based: true, wantVer: 1, wantFirst: "alice"},
		{name: "later version over nothing", save: snap(3, "bob", later), based: false},
		{name: "next version", stored: []snapshot.Snapshot{snap(1, "alice", first)}, save: snap(2, "bob", later),
			saved: true, based: true, wantVer: 2, wantFirst: "alice"},
		{name: "skipping versions", stored: []snapshot.Snapshot{snap(2, "alice", first)}, save: snap(7, "bob", later),
			saved: true, based: true, wantVer: 7, wantFirst: "alice"},
		{name: "equal version", stored: []snapshot.Snapshot{snap(2, "alice", first)}, save: snap(2, "bob", later),
			based: true, wantVer: 2, wantFirst: "alice"},
		{name: "lower version", stored: []snapshot.Snapshot{snap(4, "alice", first)}, save: snap(3, "bob", later),
			based: true, wantVer: 4, wantFirst: "alice"},
		{name: "another tenant's aggregate", stored: []snapshot.Snapshot{snap(1, "alice", first)},
			save:  func() snapshot.Snapshot { s := snap(2, "bob", later); s.AggregateID = other; return s }(),
			based: true, code: factum.CodeTenantMismatch, wantVer: 1, wantFirst: "alice"},
		{name: "invalid snapshot", save: snap(0, "bob", later), code: factum.CodeIllegalArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := snapshot.NewMemory()
			for _, s := range c.stored {
				if ok, err := m.Save(ctx, s); err != nil || !ok {
					t.Fatalf("Save: %v, %v", ok, err)
				}
			}
			saved, based, err := m.SaveEncodedNext(ctx, c.save, built.EncodedState{})
			if (c.code == "" && err != nil) || (c.code != "" && factum.CodeOf(err) != c.code) {
				t.Fatalf("SaveEncodedNext: %v, want code %q", err, c.code)
			}
			if saved != c.saved || (err == nil && based != c.based) {
				t.Fatalf("SaveEncodedNext = saved %v, based %v; want %v, %v", saved, based, c.saved, c.based)
			}
			got, err := m.Load(ctx, id)
			if c.wantVer == 0 {
				if factum.CodeOf(err) != factum.CodeNotFound {
					t.Fatalf("Load: %+v, %v; want NotFound", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != c.wantVer || got.FirstOperator != c.wantFirst || !got.FirstEventTime.Equal(first) {
				t.Fatalf("stored v%d first %q at %v; want v%d first %q at %v", got.Version, got.FirstOperator, got.FirstEventTime, c.wantVer, c.wantFirst, first)
			}
		})
	}
}
