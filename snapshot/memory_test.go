package snapshot_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/factum-go/factum"
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
