package main

import (
	"fmt"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/examples/user"
	"github.com/factum-go/factum/prepare"
	"github.com/factum-go/factum/saga"
)

// catalog is the example shop's catalog: sku-0 … sku-99.
func catalog() cart.Items {
	items := cart.Items{}
	for i := range 100 {
		items[fmt.Sprintf("sku-%d", i)] = true
	}
	return items
}

// carts is the cart aggregate type's name.
var carts = cart.New(nil, cart.DefaultLimits).Named()

// example is the example service's domain: the aggregates, the order
// summaries projection and the fulfilment saga.
type example struct {
	aggregates []aggregate.Type
	summaries  *order.Summaries
	sagas      []*saga.Saga
}

// newExample builds the domain with usernames reserved on backend.
func newExample(backend prepare.Backend) (*example, error) {
	usernames, err := prepare.NewKey[string]("username", backend)
	if err != nil {
		return nil, err
	}
	return &example{
		aggregates: []aggregate.Type{
			cart.New(catalog(), cart.DefaultLimits),
			order.Orders,
			order.Inventory,
			user.New(usernames),
		},
		summaries: order.NewSummaries(),
		sagas:     []*saga.Saga{order.Fulfilment},
	}, nil
}

// processors returns the event processors, decoding with reg.
func (e *example) processors(reg *codec.Registry) ([]*event.Processor, error) {
	p, err := e.summaries.Processor(reg)
	if err != nil {
		return nil, err
	}
	return []*event.Processor{p}, nil
}
