package main

import (
	"fmt"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/cart"
	"github.com/factum-go/factum/examples/notify"
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

// example is the example service's domain: the aggregates and the
// fulfilment saga. The order summaries, a SQL projection in the service's
// database, are wired in serve_projection.go.
type example struct {
	aggregates []aggregate.Type
	sagas      []*saga.Saga
	// processors are the event functions: the welcome mail, which fails
	// for some addresses (see package notify), so compensation has real
	// records to show and retry.
	processors []*event.Processor
}

// newExample builds the domain with usernames reserved on backend.
func newExample(backend prepare.Backend) (*example, error) {
	usernames, err := user.Usernames(backend)
	if err != nil {
		return nil, err
	}
	users := user.New(usernames)
	relay, err := notify.NewRelay(notify.RelayConfig{})
	if err != nil {
		return nil, err
	}
	welcome, err := notify.Welcome(relay, users.Named())
	if err != nil {
		return nil, err
	}
	return &example{
		aggregates: []aggregate.Type{
			cart.New(catalog(), cart.DefaultLimits),
			order.Orders,
			order.Inventory,
			users,
		},
		sagas:      []*saga.Saga{order.Fulfilment},
		processors: []*event.Processor{welcome},
	}, nil
}
