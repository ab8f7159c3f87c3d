package summariestest_test

import (
	"encoding/json"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/internal/summariestest"
)

// Fold an order placed then confirmed: one summary, and the order counted
// once, as confirmed.
func ExampleFold() {
	id := order.Orders.ID("o-1").WithTenant("acme")
	placed, _ := json.Marshal(order.OrderPlaced{OrderID: "o-1", SKU: "apple", Qty: 2})
	streams := []factum.EventStream{
		{AggregateID: id, Version: 1, Events: []factum.DomainEvent{{Name: "order_placed", Body: placed}}},
		{AggregateID: id, Version: 2, Events: []factum.DomainEvent{{Name: "order_confirmed", Body: json.RawMessage(`{}`)}}},
	}
	m, err := summariestest.Fold(streams)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Summaries["acme/o-1"].Status, m.Totals["acme/apple/confirmed"].Orders, len(m.Totals))
	// Output: confirmed 1 1
}
