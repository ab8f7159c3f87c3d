package eventstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

func Example() {
	ctx := context.Background()
	store := eventstore.NewMemory()
	cart := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("cart-1")

	stream := func(version int, requestID string) *factum.EventStream {
		return &factum.EventStream{
			ID: factum.NewID(), AggregateID: cart, Version: version,
			CommandID: factum.NewID(), RequestID: requestID,
			Events: []factum.DomainEvent{{
				ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true,
				Body: []byte(`{"sku":"sku-1"}`),
			}},
		}
	}
	fmt.Println(store.Append(ctx, stream(1, "req-1")))
	// A retry of the same intent is recognised ...
	err := store.Append(ctx, stream(1, "req-1"))
	fmt.Println(errors.Is(err, factum.ErrDuplicateRequestID))
	// ... and a competing intent is a conflict.
	err = store.Append(ctx, stream(1, "req-2"))
	fmt.Println(errors.Is(err, factum.ErrDuplicateAggregateID))

	found, _ := store.Lookup(ctx, cart, "req-1")
	log, _ := store.ReadLog(ctx, factum.Position{}, 10)
	fmt.Println(found.Version, len(log), log[0].Position)
	// Output:
	// <nil>
	// true
	// true
	// 1 1 0:1
}
