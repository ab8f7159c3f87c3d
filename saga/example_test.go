package saga_test

import (
	"fmt"
	"testing"

	"github.com/factum-go/factum/saga/sagatest"
)

// A saga is tested without a runtime: an event in, the commands out.
func Example() {
	t := &testing.T{} // in a real test, the test's own *testing.T
	out := sagatest.For(t, reservations()).
		When(OrderPlaced{OrderID: "o-1", SKUs: []string{"sku-1"}}).
		ExpectCommands(Reserve{OrderID: "o-1", SKU: "sku-1"})
	fmt.Println(out.Commands[0].Name, out.Commands[0].AggregateID)
	// Output: reserve shop.stock/sku-1@default
}
