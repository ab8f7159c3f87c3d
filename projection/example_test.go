package projection_test

import (
	"context"
	"fmt"
	"log"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/projection"
)

// A read model of item counts per cart, in a SQLite table beside the
// checkpoint: each stream's row update and the checkpoint commit together.
func Example() {
	ctx := context.Background()
	db, store, closeAll := openExampleStore(ctx, "factum-projection-example")
	defer closeAll()

	items, err := projection.New("shop", "cart_items",
		func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
			_, err := tx.Exec(ctx, `INSERT INTO cart_items (cart, items) VALUES ($1, 1)
				ON CONFLICT (cart) DO UPDATE SET items = cart_items.items + 1`, s.AggregateID.ID)
			return err
		},
		projection.Events("item_added"),
		projection.Setup(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS cart_items (cart TEXT PRIMARY KEY, items INTEGER NOT NULL)`)
			return err
		}),
	)
	if err != nil {
		log.Fatal(err)
	}

	// The log: any event store; here three streams of one cart.
	events := eventstore.NewMemory()
	cart := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("cart-1")
	for v := 1; v <= 3; v++ {
		appendItemAdded(ctx, events, cart, v)
	}

	r, err := projection.NewRunner(items, projection.Config{Log: events, Store: store})
	if err != nil {
		log.Fatal(err)
	}
	r.Drain() // return once the log is projected
	if err := r.Run(ctx); err != nil {
		log.Fatal(err)
	}
	var n int
	if err := db.Reader().QueryRowContext(ctx, `SELECT items FROM cart_items WHERE cart = 'cart-1'`).Scan(&n); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n)
	// Output: 3
}
