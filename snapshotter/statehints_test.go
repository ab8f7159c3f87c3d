package snapshotter

import (
	"fmt"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

func TestStateHints(t *testing.T) {
	carts := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	orders := factum.NamedAggregate{Context: "shop", Aggregate: "order"}
	st := func(id factum.AggregateID, v int) aggregate.StoredState {
		return aggregate.StoredState{ID: id, Version: v, State: []byte(`{}`)}
	}
	h := newStateHints(64)
	a := carts.WithID("a")

	h.ObserveState(st(a, 3))
	if _, ok := h.take(a, 2); ok {
		t.Fatal("a hint for version 3 served version 2")
	}
	if got, ok := h.take(a.WithTenant(factum.DefaultTenant), 3); !ok || got.Version != 3 {
		t.Fatalf("take(3) = %+v, %v; want the hint (the default tenant is the same)", got, ok)
	}
	if _, ok := h.take(a, 3); ok {
		t.Fatal("a hint served twice")
	}

	h.ObserveState(st(a, 4))
	h.ObserveState(st(a, 2)) // late and older: ignored
	if _, ok := h.take(a, 5); ok {
		t.Fatal("a hint for version 4 served version 5")
	}
	if _, ok := h.take(a, 4); ok {
		t.Fatal("a hint older than the stream asked for was kept")
	}

	h.ObserveState(st(a, 1))
	for _, other := range []factum.AggregateID{orders.WithID("a"), a.WithTenant("acme")} {
		if _, ok := h.take(other, 1); ok {
			t.Fatalf("%s was served a's hint", other)
		}
	}

	full := newStateHints(hintShards) // one per shard
	for i := range 10 * hintShards {
		full.ObserveState(st(carts.WithID(string(rune('a'+i%26))+string(rune('A'+i/26))), 1))
	}
	n := 0
	for i := range full.shards {
		n += len(full.shards[i].m)
	}
	if n > hintShards {
		t.Fatalf("%d hints kept, limit %d", n, hintShards)
	}
	off := newStateHints(0)
	off.ObserveState(st(a, 1))
	if _, ok := off.take(a, 1); ok {
		t.Fatal("hints kept with size 0")
	}
}

// TestStateHintsRecycled takes and forgets hints, whose entries the next
// hints reuse, and checks that no state passes from one aggregate to
// another and that the recycled entries stay within the limit.
func TestStateHintsRecycled(t *testing.T) {
	carts := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	h := newStateHints(hintShards) // one per shard
	for i := range 200 {
		a, b := carts.WithID(fmt.Sprint("a", i)), carts.WithID(fmt.Sprint("b", i))
		h.ObserveState(aggregate.StoredState{ID: a, Version: i + 1, State: []byte(fmt.Sprint(i))})
		if got, ok := h.take(a, i+1); !ok || got.ID.ID != a.ID || string(got.State) != fmt.Sprint(i) {
			t.Fatalf("take(%s, %d) = %+v, %v", a, i+1, got, ok)
		}
		h.ObserveState(aggregate.StoredState{ID: b, Version: 1, State: []byte(`{}`)})
		if _, ok := h.take(a, i+1); ok {
			t.Fatalf("%s taken twice (its entry now holds %s)", a, b)
		}
		h.forget(b)
		if _, ok := h.take(b, 1); ok {
			t.Fatalf("%s forgotten but taken", b)
		}
	}
	for i := range h.shards {
		sh := &h.shards[i]
		if len(sh.m) != 0 {
			t.Fatalf("shard %d holds %d hints after all were taken", i, len(sh.m))
		}
		if len(sh.free) > h.limit {
			t.Fatalf("shard %d keeps %d free entries, limit %d", i, len(sh.free), h.limit)
		}
		for _, p := range sh.free {
			if p.State != nil || p.ID.ID != "" {
				t.Fatalf("shard %d keeps a free entry that holds %+v", i, *p)
			}
		}
	}
}
