package projection_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/projection"
)

// A versioned read model with a query: the tables are named per build
// (tx.Table), the query reads them through the caller's tenant's scope,
// and a blue/green rebuild swaps in a new build.
func ExampleQuery() {
	ctx := context.Background()
	_, store, closeAll := openExampleStore(ctx, "factum-projection-query")
	defer closeAll()
	items, err := projection.New("shop", "cart_items",
		func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
			t := tx.Table("carts")
			_, err := tx.Exec(ctx, `INSERT INTO `+t+` (tenant, cart, items) VALUES ($1, $2, 1)
				ON CONFLICT (tenant, cart) DO UPDATE SET items = `+t+`.items + 1`, s.AggregateID.TenantOrDefault(), s.AggregateID.ID)
			return err
		},
		projection.Events("item_added"),
		projection.Schema(1, "carts"),
		projection.Setup(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+tx.Table("carts")+` (
				tenant TEXT NOT NULL, cart TEXT NOT NULL, items INTEGER NOT NULL, PRIMARY KEY (tenant, cart))`)
			return err
		}),
		projection.Query("at_least", func(q projection.Scope, a projection.Args) (string, []any, error) {
			return `SELECT cart, items FROM ` + q.From("carts") + ` WHERE items >= $1 ORDER BY cart`, []any{a.Int("items")}, nil
		}, projection.Param("items", projection.Int, true)),
	)
	if err != nil {
		log.Fatal(err)
	}

	events := eventstore.NewMemory()
	for _, e := range []struct {
		tenant, id string
		version    int
	}{{"", "cart-1", 1}, {"", "cart-1", 2}, {"", "cart-2", 1}, {"globex", "other-1", 1}} {
		agg := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID(e.id)
		agg.Tenant = e.tenant
		appendItemAdded(ctx, events, agg, e.version)
	}

	r, err := projection.NewRunner(items, projection.Config{Log: events, Store: store})
	if err != nil {
		log.Fatal(err)
	}
	r.Drain()
	if err := r.Run(ctx); err != nil {
		log.Fatal(err)
	}
	res, err := r.Query(ctx, factum.DefaultTenant, "at_least", map[string]string{"items": "1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("build", res.Build, res.Rows)

	// Blue/green: build 2 fills beside build 1, then replaces it.
	if err := r.Rebuild(ctx); err != nil {
		log.Fatal(err)
	}
	r2, _ := projection.NewRunner(items, projection.Config{Log: events, Store: store})
	for {
		s, err := r2.Status(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if s.Next == nil && s.Live.Number == 2 {
			break
		}
		ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_ = r2.Run(ctx)
		cancel()
	}
	res, _ = r2.Query(ctx, factum.DefaultTenant, "at_least", map[string]string{"items": "2"})
	fmt.Println("build", res.Build, res.Rows)
	// Output:
	// build 1 [map[cart:cart-1 items:2] map[cart:cart-2 items:1]]
	// build 2 [map[cart:cart-1 items:2]]
}
