package factum_test

import (
	"errors"
	"fmt"

	"github.com/factum-go/factum"
)

func Example() {
	carts := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	cmd := factum.NewCommand(carts.WithID("cart-42"), struct{ SKU string }{"sku-1"}).
		WithRequestID("req-7")
	fmt.Println(cmd.AggregateID, cmd.RequestIDOrID())

	// Errors carry a stable code and the identities involved.
	err := fmt.Errorf("append: %w",
		factum.NewError(factum.CodeDuplicateRequestID, "already appended").
			With(cmd.AggregateID, 3, cmd.ID, cmd.RequestID))
	fmt.Println(errors.Is(err, factum.ErrDuplicateRequestID), factum.CodeOf(err), factum.IsRetryable(err))
	var fe *factum.Error
	if errors.As(err, &fe) {
		fmt.Println(fe.Aggregate.ID, fe.Version, fe.RequestID)
	}
	// Output:
	// shop.cart/cart-42@default req-7
	// true DuplicateRequestId false
	// cart-42 3 req-7
}

func ExampleNameOf() {
	type CartItemAdded struct{}
	type HTTPRequestSent struct{}
	fmt.Println(factum.NameOf(CartItemAdded{}), factum.NameOf(&HTTPRequestSent{}))
	// Output: cart_item_added http_request_sent
}

func ExampleParseCommandStage() {
	s, err := factum.ParseCommandStage("snapshot")
	fmt.Println(s, err, factum.StageProcessed.IsPreviousOf(s), s.IsPreviousOf(factum.StageProjected))
	// Output: SNAPSHOT <nil> true false
}
