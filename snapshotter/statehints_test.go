package snapshotter

import (
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
