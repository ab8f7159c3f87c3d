package sqlite_test

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
	"github.com/factum-go/factum/sqlite"
)

// A runtime whose events, snapshots and consumer checkpoints all live in
// one SQLite file: a command awaited to the SNAPSHOT stage is then visible
// to queries.
func ExampleNewSnapshotStore() {
	ctx := context.Background()
	db, done := openExample(ctx)
	defer done()
	events, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer events.Close()
	snapshots, err := sqlite.NewSnapshotStore(ctx, db, "shop")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer snapshots.Close()
	checkpoints, err := sqlite.NewCheckpointStore(ctx, db, "shop")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer checkpoints.Close()

	carts := cart.New(cart.Items{"apple": true, "pear": true}, cart.DefaultLimits)
	rt, err := engine.New(engine.Config{Store: events, SnapshotStore: snapshots, Checkpoints: checkpoints}, carts)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := rt.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		rt.Shutdown(sctx)
	}()
	for _, add := range []struct {
		cart, sku string
		qty       int
	}{{"cart-1", "apple", 2}, {"cart-2", "pear", 5}, {"cart-1", "pear", 1}} {
		cmd := factum.NewCommand(carts.ID(add.cart), cart.AddItem{SKU: add.sku, Qty: add.qty})
		if _, err := rt.Gateway().SendAndWait(ctx, cmd, command.Wait(factum.StageSnapshot)); err != nil {
			fmt.Println(err)
			return
		}
	}

	svc, err := snapshot.NewQueryService(snapshots, carts.Named(), query.Planner{})
	if err != nil {
		fmt.Println(err)
		return
	}
	list, err := svc.List(ctx, query.Query{
		Condition: query.Exists("state.items.pear", true),
		Sort:      []query.Sort{query.SortDesc("version")},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range list {
		fmt.Println(s.AggregateID.ID, s.Version, string(s.State))
	}
	// Output:
	// cart-1 2 {"items":{"apple":2,"pear":1}}
	// cart-2 1 {"items":{"pear":5}}
}
