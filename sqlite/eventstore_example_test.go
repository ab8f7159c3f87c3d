package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/sqlite"
)

func ExampleNewEventStore() {
	ctx := context.Background()
	db, done := openExample(ctx)
	defer done()
	store, err := sqlite.NewEventStore(ctx, db, "shop", sqlite.EventStoreOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	cart := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("cart-42")
	stream := func(version int, requestID string) *factum.EventStream {
		return &factum.EventStream{
			ID: factum.NewID(), AggregateID: cart, Version: version,
			CommandID: factum.NewID(), RequestID: requestID, CreateTime: time.Now(),
			Events: []factum.DomainEvent{{
				ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true,
				Body: []byte(`{"sku":"sku-1","qty":2}`),
			}},
		}
	}
	if err := store.Append(ctx, stream(1, "req-1")); err != nil {
		fmt.Println(err)
		return
	}
	// A retried request is refused as a duplicate, not stored twice.
	err = store.Append(ctx, stream(2, "req-1"))
	fmt.Println(errors.Is(err, factum.ErrDuplicateRequestID))

	log, _ := store.ReadLog(ctx, factum.Position{}, 10)
	for _, s := range log {
		fmt.Println(s.Position, s.AggregateID, s.Version, string(s.Events[0].Body))
	}
	// Output:
	// true
	// 0:1 shop.cart/cart-42@default 1 {"sku":"sku-1","qty":2}
}
