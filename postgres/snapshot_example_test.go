package postgres_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/postgres"
	"github.com/factum-go/factum/query"
	"github.com/factum-go/factum/snapshot"
)

// A runtime whose events, snapshots and consumer checkpoints all live in
// one PostgreSQL schema: a command awaited to the SNAPSHOT stage is then
// visible to queries, from this instance or any other. It needs a running
// server, so it is compiled but not run.
func ExampleNewSnapshotStore() {
	ctx := context.Background()
	db := openExample(ctx)
	defer db.Close()
	events, err := postgres.NewEventStore(ctx, db, "shop", postgres.EventStoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer events.Close()
	snapshots, err := postgres.NewSnapshotStore(ctx, db, "shop")
	if err != nil {
		log.Fatal(err)
	}
	checkpoints, err := postgres.NewCheckpointStore(ctx, db, "shop")
	if err != nil {
		log.Fatal(err)
	}

	carts := cart.New(cart.Items{"apple": true, "pear": true}, cart.DefaultLimits)
	rt, err := engine.New(engine.Config{Store: events, SnapshotStore: snapshots, Checkpoints: checkpoints}, carts)
	if err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		rt.Shutdown(sctx)
	}()
	cmd := factum.NewCommand(carts.ID("cart-1"), cart.AddItem{SKU: "pear", Qty: 2})
	if _, err := rt.Gateway().SendAndWait(ctx, cmd, command.Wait(factum.StageSnapshot)); err != nil {
		log.Fatal(err)
	}

	svc, err := snapshot.NewQueryService(snapshots, carts.Named(), query.Planner{})
	if err != nil {
		log.Fatal(err)
	}
	page, err := svc.Paged(ctx, query.PagedQuery{
		Condition:  query.Gte("state.items.pear", 2),
		Sort:       []query.Sort{query.SortDesc("eventTime")},
		Pagination: query.Pagination{Index: 1, Size: 20},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(page.Total)
	for _, s := range page.List {
		fmt.Println(s.AggregateID.ID, s.Version, string(s.State))
	}
}
