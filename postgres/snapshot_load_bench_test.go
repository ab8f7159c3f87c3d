package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/snapshot"
)

// loadPage is the aggregate processor's page of streams.
const loadPage = 1024

// loadCart rebuilds a cart as the aggregate processor does on a cache
// miss: the snapshot's state, if snaps is set and has one, then the
// streams after it in pages, each decoded and applied.
func loadCart(ctx context.Context, def *aggregate.Definition[cart.Cart], reg *codec.Registry, events eventstore.Store,
	snaps snapshot.Store, id factum.AggregateID) (aggregate.State[cart.Cart], error) {
	st := aggregate.State[cart.Cart]{ID: id, Value: def.NewState()}
	if snaps != nil {
		snap, err := snaps.Load(ctx, id)
		if err != nil {
			return st, err
		}
		if st, err = def.FromStored(aggregate.StoredState{ID: snap.AggregateID, Version: snap.Version, OwnerID: snap.OwnerID,
			Deleted: snap.Deleted, EventTime: snap.EventTime, State: snap.State}); err != nil {
			return st, err
		}
	}
	for {
		streams, err := events.Load(ctx, id, st.Version+1, st.Version+loadPage)
		if err != nil {
			return st, err
		}
		for i := range streams {
			if err := def.Source(reg, &st, &streams[i]); err != nil {
				return st, err
			}
		}
		if len(streams) < loadPage {
			return st, nil
		}
	}
}

// benchLoad appends 10,000 streams of one cart (one item_added event
// each), saves its snapshot at the last version, and measures loadCart
// without and with the snapshot.
func benchLoad(b *testing.B, events eventstore.Store, snaps snapshot.Store) {
	ctx := context.Background()
	def := cart.New(cart.Items{}, cart.DefaultLimits)
	reg := codec.NewRegistry()
	if err := def.Register(reg); err != nil {
		b.Fatal(err)
	}
	id := def.ID("big")
	const n = 10_000
	for v := 1; v <= n; v++ {
		body, _ := json.Marshal(cart.ItemAdded{SKU: fmt.Sprintf("sku-%d", v%20), Qty: 1})
		err := events.Append(ctx, &factum.EventStream{
			ID: factum.NewID(), AggregateID: id, Version: v, CommandID: factum.NewID(), RequestID: fmt.Sprintf("r-%d", v),
			CreateTime: time.Now(), OwnerID: "u1",
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: body}},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	full, err := loadCart(ctx, def, reg, events, nil, id)
	if err != nil || full.Version != n {
		b.Fatalf("load: v%d, %v", full.Version, err)
	}
	stored, err := def.ToStored(full)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := snaps.Save(ctx, snapshot.Snapshot{AggregateID: stored.ID, OwnerID: stored.OwnerID, Version: stored.Version,
		EventTime: stored.EventTime, State: stored.State}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		snaps snapshot.Store
	}{{"without_snapshot", nil}, {"with_snapshot", snaps}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := benchCPU()
			for b.Loop() {
				st, err := loadCart(ctx, def, reg, events, c.snaps, id)
				if err != nil || st.Version != n || st.Value.Items["sku-1"] != n/20 {
					b.Fatalf("load: v%d %v, %v", st.Version, st.Value.Items, err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}
