package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/sqlite"
)

type Cart struct{ Items map[string]int }

type AddItem struct {
	SKU string
	Qty int
}

type ItemAdded struct {
	SKU string
	Qty int
}

var Carts = aggregate.New[Cart]("shop", "cart",
	aggregate.Source(func(c *Cart, e ItemAdded) {
		if c.Items == nil {
			c.Items = map[string]int{}
		}
		c.Items[e.SKU] += e.Qty
	}),
	aggregate.Handle(func(ctx context.Context, c Cart, cmd AddItem) ([]any, error) {
		if cmd.Qty <= 0 {
			return nil, factum.IllegalArgument("quantity must be positive")
		}
		return []any{ItemAdded(cmd)}, nil
	}, aggregate.AllowCreate()),
)

// The design sketch on SQLite: one handle is the storage, and the engine
// opens the events, snapshots and checkpoints of the shop context in it.
func Example_sqlite() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "engine-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	store, _ := sqlite.Open(ctx, filepath.Join(dir, "factum.db"))
	defer store.Close()
	rt, _ := engine.New(engine.Config{Storage: store}, Carts)
	_ = rt.Start(ctx)
	defer rt.Shutdown(ctx)

	res, err := rt.Gateway().SendAndWait(ctx,
		factum.NewCommand(Carts.ID("cart-42"), AddItem{"sku-1", 2}).WithRequestID("req-7"),
		command.Wait(factum.StageSnapshot))
	fmt.Println(res.AggregateVersion, err)
	snap, _ := rt.Snapshots().Load(ctx, Carts.ID("cart-42"))
	fmt.Println(string(snap.State))
	// Output:
	// 1 <nil>
	// {"Items":{"sku-1":2}}
}
