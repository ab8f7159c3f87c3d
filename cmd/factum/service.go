package main

import (
	"fmt"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/examples/cart"
)

// catalog is the example shop's catalog: sku-0 … sku-99.
func catalog() cart.Items {
	items := cart.Items{}
	for i := range 100 {
		items[fmt.Sprintf("sku-%d", i)] = true
	}
	return items
}

// exampleAggregates are the aggregate types `factum serve` runs. The order,
// inventory and user examples join here when they are wired in.
func exampleAggregates() []aggregate.Type {
	return []aggregate.Type{cart.New(catalog(), cart.DefaultLimits)}
}
