package cart_test

import (
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/aggregate/aggregatetest"
	"github.com/factum-go/factum/examples/cart"
)

var catalog = cart.Items{"apple": true, "pear": true, "plum": true}

func spec(t *testing.T) *aggregatetest.Spec[cart.Cart] {
	return aggregatetest.For(t, cart.New(catalog, cart.Limits{MaxQuantity: 5, MaxItems: 2}))
}

func items(kv ...any) cart.Cart {
	c := cart.Cart{Items: map[string]int{}}
	for i := 0; i < len(kv); i += 2 {
		c.Items[kv[i].(string)] = kv[i+1].(int)
	}
	return c
}

func TestAddItem(t *testing.T) {
	spec(t).When(cart.AddItem{SKU: "apple", Qty: 2}).
		Events(cart.ItemAdded{SKU: "apple", Qty: 2}).
		State(items("apple", 2)).
		Version(1).
		Fork("again adds up", func(t *testing.T, s *aggregatetest.Spec[cart.Cart]) {
			s.When(cart.AddItem{SKU: "apple", Qty: 3}).Events(cart.ItemAdded{SKU: "apple", Qty: 3}).State(items("apple", 5)).Version(2)
		}).
		Fork("beyond the maximum quantity", func(t *testing.T, s *aggregatetest.Spec[cart.Cart]) {
			s.When(cart.AddItem{SKU: "apple", Qty: 4}).Error(factum.CodeIllegalState).State(items("apple", 2)).Version(1)
		}).
		Fork("second distinct item", func(t *testing.T, s *aggregatetest.Spec[cart.Cart]) {
			s.When(cart.AddItem{SKU: "pear", Qty: 1}).NoError().State(items("apple", 2, "pear", 1)).
				Fork("third distinct item refused", func(t *testing.T, s *aggregatetest.Spec[cart.Cart]) {
					s.When(cart.AddItem{SKU: "plum", Qty: 1}).Error(factum.CodeIllegalState)
				}).
				Fork("more of a held item still allowed", func(t *testing.T, s *aggregatetest.Spec[cart.Cart]) {
					s.When(cart.AddItem{SKU: "pear", Qty: 1}).Events(cart.ItemAdded{SKU: "pear", Qty: 1})
				})
		})
}

func TestAddItemRejections(t *testing.T) {
	for name, cmd := range map[string]cart.AddItem{
		"unknown item":  {SKU: "kiwi", Qty: 1},
		"zero quantity": {SKU: "apple", Qty: 0},
		"too many":      {SKU: "apple", Qty: 6},
	} {
		t.Run(name, func(t *testing.T) {
			spec(t).When(cmd).Error(factum.CodeIllegalArgument).Version(0)
		})
	}
}

func TestAddItemValidation(t *testing.T) {
	err := cart.AddItem{SKU: "", Qty: 0}.Validate()
	if err == nil {
		t.Fatal("an empty SKU and zero quantity validate")
	}
	if err := (cart.AddItem{SKU: "apple", Qty: 1}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestRemoveItem(t *testing.T) {
	given := spec(t).Given(cart.ItemAdded{SKU: "apple", Qty: 2}, cart.ItemAdded{SKU: "pear", Qty: 1})
	given.When(cart.RemoveItem{SKU: "apple"}).Events(cart.ItemRemoved{SKU: "apple"}).State(items("pear", 1)).Version(2)
	given.When(cart.RemoveItem{SKU: "plum"}).Error(factum.CodeIllegalState).State(items("apple", 2, "pear", 1))
	spec(t).When(cart.RemoveItem{SKU: "apple"}).Error(factum.CodeNotFound) // no cart yet
}

func TestChangeQuantity(t *testing.T) {
	given := spec(t).Given(cart.ItemAdded{SKU: "apple", Qty: 2})
	given.When(cart.ChangeQuantity{SKU: "apple", Qty: 4}).Events(cart.QuantityChanged{SKU: "apple", Qty: 4}).State(items("apple", 4))
	given.When(cart.ChangeQuantity{SKU: "apple", Qty: 2}).Error(factum.CodeIllegalState)
	given.When(cart.ChangeQuantity{SKU: "pear", Qty: 1}).Error(factum.CodeIllegalState)
	given.When(cart.ChangeQuantity{SKU: "apple", Qty: 6}).Error(factum.CodeIllegalArgument)
	given.When(cart.ChangeQuantity{SKU: "apple", Qty: 0}).Error(factum.CodeIllegalArgument)
}

func TestClearCart(t *testing.T) {
	spec(t).Given(cart.ItemAdded{SKU: "apple", Qty: 2}).
		When(cart.ClearCart{}).Events(cart.CartCleared{}).State(items()).
		Fork("clearing an empty cart", func(t *testing.T, s *aggregatetest.Spec[cart.Cart]) {
			s.When(cart.ClearCart{}).Error(factum.CodeIllegalState)
		})
}

func TestDeleteAndRecover(t *testing.T) {
	spec(t).Given(cart.ItemAdded{SKU: "apple", Qty: 2}).
		When(aggregate.DeleteAggregate{}).Events(aggregate.AggregateDeleted{}).Deleted(true).Version(2).
		Fork("deleted refuses commands", func(t *testing.T, s *aggregatetest.Spec[cart.Cart]) {
			s.When(cart.AddItem{SKU: "apple", Qty: 1}).Error(factum.CodeIllegalAccessDeletedAggregate)
			s.When(cart.ClearCart{}).Error(factum.CodeIllegalAccessDeletedAggregate)
			s.When(aggregate.DeleteAggregate{}).Error(factum.CodeIllegalAccessDeletedAggregate)
		}).
		Fork("recover restores it", func(t *testing.T, s *aggregatetest.Spec[cart.Cart]) {
			s.When(aggregate.RecoverAggregate{}).Events(aggregate.AggregateRecovered{}).Deleted(false).State(items("apple", 2)).Version(3).
				Fork("usable again", func(t *testing.T, s *aggregatetest.Spec[cart.Cart]) {
					s.When(cart.AddItem{SKU: "apple", Qty: 1}).State(items("apple", 3))
				})
		})
	spec(t).Given(cart.ItemAdded{SKU: "apple", Qty: 2}).When(aggregate.RecoverAggregate{}).Error(factum.CodeIllegalState)
}

func TestExpectedVersionAndOwner(t *testing.T) {
	s := spec(t).Given(cart.ItemAdded{SKU: "apple", Qty: 1})
	s.WhenCommand(factum.NewCommand(factum.AggregateID{}, cart.ClearCart{}).WithExpectedVersion(3)).Error(factum.CodeCommandExpectVersionConflict)
	s.WhenCommand(factum.NewCommand(factum.AggregateID{}, cart.ClearCart{}).WithExpectedVersion(1)).NoError()
	s.WhenCommand(factum.NewCommand(factum.AggregateID{}, cart.ClearCart{}).WithTenant("other")).Error(factum.CodeNotFound) // another tenant sees no cart
}
