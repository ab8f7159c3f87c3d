package order_test

import (
	"testing"

	"github.com/factum-go/factum/aggregate/aggregatetest"
	"github.com/factum-go/factum/examples/order"
)

// The names the example's events and commands are stored under stay as
// they are: a Go rename that changed one fails here (update on purpose
// with go test -run TestStoredNames -update-names).
func TestStoredNames(t *testing.T) {
	aggregatetest.LockTypeNames(t, "testdata/names.golden", order.Orders, order.Inventory)
}
