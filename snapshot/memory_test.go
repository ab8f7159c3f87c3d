package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/snapshot/snapshottest"
)

func TestMemoryContract(t *testing.T) {
	shared := snapshot.NewMemory()
	t.Run("shared", func(t *testing.T) {
		snapshottest.Run(t, func(*testing.T) snapshot.Store { return shared })
	})
	t.Run("fresh", func(t *testing.T) {
		snapshottest.Run(t, func(*testing.T) snapshot.Store { return snapshot.NewMemory() })
	})
}

// TestMemoryReplaceKeepsCopies saves over a stored snapshot, whose state
// buffer the store may reuse, and checks that neither a state loaded
// before nor the caller's buffer shares it.
func TestMemoryReplaceKeepsCopies(t *testing.T) {
	ctx := context.Background()
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("a")
	st := snapshot.NewMemory()
	save := func(v int, state []byte) {
		t.Helper()
		s := snapshot.Snapshot{AggregateID: id, Version: v, EventID: fmt.Sprint("e", v), State: state}
		if ok, err := st.Save(ctx, s); err != nil || !ok {
			t.Fatalf("save v%d = %v, %v", v, ok, err)
		}
	}
	load := func() snapshot.Snapshot {
		t.Helper()
		s, err := st.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	save(1, []byte(`{"n":1111}`))
	first := load()
	cases := []struct {
		v     int
		state string
	}{
		{2, `{"n":2222}`},        // same size
		{3, `{"n":3}`},           // smaller
		{4, `{"n":44444444444}`}, // larger
		{5, `{"n":5555555555}`},  // smaller again, into the larger buffer
	}
	for _, c := range cases {
		buf := []byte(c.state)
		save(c.v, buf)
		copy(buf, `{"n":"XXXX"}`)
		if got := load(); got.Version != c.v || string(got.State) != c.state {
			t.Fatalf("after saving v%d %s: loaded v%d %s", c.v, c.state, got.Version, got.State)
		}
	}
	if string(first.State) != `{"n":1111}` {
		t.Fatalf("a state loaded before the saves changed: %s", first.State)
	}
}

// The memory backend's batch save keeps the whole contract behind the
// batch front end, the kit holding the batches to Save.
func TestMemoryBatchBackendContract(t *testing.T) {
	snapshottest.Run(t, func(t *testing.T) snapshot.Store {
		f, err := snapshot.NewBatch(snapshot.NewMemory().Backend(), snapshot.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	})
}

// SaveBatchAtEncoded saves a batch as SaveBatch does, except that a
// state flagged as the executor's is not checked for JSON; it never joins
// the checkpoint, and a batch it refuses saves nothing.
func TestMemorySaveBatchAtEncoded(t *testing.T) {
	ctx := context.Background()
	carts := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	users := factum.NamedAggregate{Context: "shop", Aggregate: "user"}
	snap := func(id factum.AggregateID, v int, state string) snapshot.Snapshot {
		return snapshot.Snapshot{AggregateID: id, Version: v, EventID: fmt.Sprint("e", v), State: []byte(state)}
	}
	group := factum.Function{Context: "shop", Processor: "snapshotter"}
	cases := []struct {
		name      string
		snaps     []snapshot.Snapshot
		encoded   []bool
		wantSaved []bool
		wantCode  factum.Code // CodeOk: no error
	}{
		{"two types", []snapshot.Snapshot{snap(carts.WithID("a"), 3, `{"n":3}`), snap(users.WithID("u"), 1, `{"n":1}`)},
			[]bool{true, false}, []bool{true, true}, factum.CodeOk},
		{"an older version", []snapshot.Snapshot{snap(carts.WithID("a"), 2, `{"n":2}`), snap(carts.WithID("b"), 1, `{}`)},
			[]bool{true, true}, []bool{false, true}, factum.CodeOk},
		{"another tenant's", []snapshot.Snapshot{snap(carts.WithID("a").WithTenant("t2"), 4, `{}`)},
			[]bool{true}, []bool{false}, factum.CodeOk},
		{"the executor's state unchecked", []snapshot.Snapshot{snap(carts.WithID("x"), 1, `unchecked`)},
			[]bool{true}, []bool{true}, factum.CodeOk},
		{"another state checked", []snapshot.Snapshot{snap(carts.WithID("c"), 1, `{}`), snap(carts.WithID("y"), 1, `not JSON`)},
			[]bool{true, false}, nil, factum.CodeIllegalArgument},
		{"a flag short", []snapshot.Snapshot{snap(carts.WithID("d"), 1, `{}`)},
			nil, nil, factum.CodeIllegalArgument},
	}
	st := snapshot.NewMemory()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cps := event.NewMemoryCheckpoints()
			saved, joined, err := st.SaveBatchAtEncoded(ctx, c.snaps, c.encoded, cps, group, factum.Position{Seq: 7}, built.EncodedState{})
			if c.wantCode != factum.CodeOk {
				if factum.CodeOf(err) != c.wantCode {
					t.Fatalf("error %v, want code %s", err, c.wantCode)
				}
				for _, s := range c.snaps {
					if _, err := st.Load(ctx, s.AggregateID); !errors.Is(err, factum.ErrNotFound) {
						t.Fatalf("a refused batch saved %s: %v", s.AggregateID, err)
					}
				}
				return
			}
			if err != nil || joined || !slices.Equal(saved, c.wantSaved) {
				t.Fatalf("saved %v, joined %v, %v; want %v, not joined", saved, joined, err, c.wantSaved)
			}
			if pos, _ := cps.Checkpoint(ctx, group); pos != (factum.Position{}) {
				t.Fatalf("the checkpoint moved to %s: the caller saves it", pos)
			}
			for i, s := range c.snaps {
				got, err := st.Load(ctx, s.AggregateID)
				if saved[i] && (err != nil || got.Version != s.Version || string(got.State) != string(s.State)) {
					t.Fatalf("%s: loaded v%d %s, %v; want v%d %s", s.AggregateID, got.Version, got.State, err, s.Version, s.State)
				}
			}
		})
	}
}
