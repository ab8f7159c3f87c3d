package event_test

import (
	"context"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// appendCartItem appends to store the examples' stream: version 1 of
// cart-1, one item_added event for sku-1.
func appendCartItem(ctx context.Context, store eventstore.Store) error {
	return store.Append(ctx, &factum.EventStream{
		ID: factum.NewID(), AggregateID: carts.WithID("cart-1"), Version: 1,
		CommandID: factum.NewID(), RequestID: "req-1", CreateTime: time.Now(),
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: []byte(`{"sku":"sku-1"}`)}},
	})
}
