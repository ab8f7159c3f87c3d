package cart_test

import (
	"testing"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/aggregate/aggregatetest"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/examples/cart"
)

// The names the example's events and commands are stored under stay as
// they are: a Go rename that changed one fails here (update on purpose
// with go test -run TestStoredNames -update-names).
func TestStoredNames(t *testing.T) {
	types, err := aggregate.NewRegistry(cart.New(cart.Items{}, cart.DefaultLimits))
	if err != nil {
		t.Fatal(err)
	}
	reg := codec.NewRegistry()
	if err := types.Register(reg); err != nil {
		t.Fatal(err)
	}
	aggregatetest.LockNames(t, reg, "testdata/names.golden")
}
