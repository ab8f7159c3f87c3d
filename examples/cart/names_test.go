package cart_test

import (
	"testing"

	"github.com/factum-go/factum/aggregate/aggregatetest"
	"github.com/factum-go/factum/examples/cart"
)

// The names the example's events and commands are stored under stay as
// they are: a Go rename that changed one fails here (update on purpose
// with go test -run TestStoredNames -update-names).
func TestStoredNames(t *testing.T) {
	aggregatetest.LockTypeNames(t, "testdata/names.golden", cart.New(cart.Items{}, cart.DefaultLimits))
}
