package cart

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
)

// Limits are the cart's rules.
type Limits struct {
	// MaxQuantity is the most of one item a cart may hold.
	MaxQuantity int
	// MaxItems is the most distinct items a cart may hold.
	MaxItems int
}

// DefaultLimits: 99 of an item, 20 distinct items.
var DefaultLimits = Limits{MaxQuantity: 99, MaxItems: 20}

// Catalog tells which items exist. It is the cart's one dependency and
// comes in by closure.
type Catalog interface {
	Exists(ctx context.Context, sku string) bool
}

// Items is a fixed catalog.
type Items map[string]bool

// Exists implements Catalog.
func (c Items) Exists(_ context.Context, sku string) bool { return c[sku] }

// Cart is the state: quantity by SKU.
type Cart struct {
	Items map[string]int `json:"items"`
}

// The commands.
type (
	// AddItem adds Qty of an item; it creates the cart if needed.
	AddItem struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	// RemoveItem removes an item entirely.
	RemoveItem struct {
		SKU string `json:"sku"`
	}
	// ChangeQuantity sets an item's quantity.
	ChangeQuantity struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	// ClearCart removes every item.
	ClearCart struct{}
)

// The events.
type (
	// ItemAdded records AddItem.
	ItemAdded struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	// ItemRemoved records RemoveItem.
	ItemRemoved struct {
		SKU string `json:"sku"`
	}
	// QuantityChanged records ChangeQuantity.
	QuantityChanged struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	// CartCleared records ClearCart.
	CartCleared struct{}
)

// Validate checks the body before it is sent (CommandValidation).
func (c AddItem) Validate() error { return validateLine(c.SKU, c.Qty) }

// Validate checks the body before it is sent (CommandValidation).
func (c ChangeQuantity) Validate() error { return validateLine(c.SKU, c.Qty) }

func validateLine(sku string, qty int) error {
	var errs command.ValidationErrors
	if sku == "" {
		errs = append(errs, factum.BindingError{Field: "sku", Message: "is required"})
	}
	if qty < 1 {
		errs = append(errs, factum.BindingError{Field: "qty", Message: "must be at least 1"})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// New defines the cart aggregate ("shop", "cart") with its catalog and
// limits.
func New(catalog Catalog, limits Limits) *aggregate.Definition[Cart] {
	return aggregate.New[Cart]("shop", "cart",
		aggregate.Initial(func() Cart { return Cart{Items: map[string]int{}} }),

		aggregate.Source(func(c *Cart, e ItemAdded) { c.Items[e.SKU] += e.Qty }),
		aggregate.Source(func(c *Cart, e ItemRemoved) { delete(c.Items, e.SKU) }),
		aggregate.Source(func(c *Cart, e QuantityChanged) { c.Items[e.SKU] = e.Qty }),
		aggregate.Source(func(c *Cart, _ CartCleared) { clear(c.Items) }),

		aggregate.Handle(func(ctx context.Context, c Cart, cmd AddItem) ([]any, error) {
			if err := limits.quantity(cmd.Qty); err != nil {
				return nil, err
			}
			if !catalog.Exists(ctx, cmd.SKU) {
				return nil, factum.IllegalArgument(fmt.Sprintf("unknown item %q", cmd.SKU))
			}
			have, inCart := c.Items[cmd.SKU]
			if !inCart && len(c.Items) >= limits.MaxItems {
				return nil, factum.IllegalState(fmt.Sprintf("a cart holds at most %d distinct items", limits.MaxItems))
			}
			if have+cmd.Qty > limits.MaxQuantity {
				return nil, factum.IllegalState(fmt.Sprintf("at most %d of an item; the cart has %d of %q", limits.MaxQuantity, have, cmd.SKU))
			}
			return []any{ItemAdded(cmd)}, nil
		}, aggregate.AllowCreate()),

		aggregate.Handle(func(_ context.Context, c Cart, cmd RemoveItem) ([]any, error) {
			if _, ok := c.Items[cmd.SKU]; !ok {
				return nil, factum.IllegalState(fmt.Sprintf("item %q is not in the cart", cmd.SKU))
			}
			return []any{ItemRemoved(cmd)}, nil
		}),

		aggregate.Handle(func(_ context.Context, c Cart, cmd ChangeQuantity) ([]any, error) {
			if err := limits.quantity(cmd.Qty); err != nil {
				return nil, err
			}
			have, ok := c.Items[cmd.SKU]
			if !ok {
				return nil, factum.IllegalState(fmt.Sprintf("item %q is not in the cart", cmd.SKU))
			}
			if have == cmd.Qty {
				return nil, factum.IllegalState(fmt.Sprintf("item %q already has quantity %d", cmd.SKU, cmd.Qty))
			}
			return []any{QuantityChanged(cmd)}, nil
		}),

		aggregate.Handle(func(_ context.Context, c Cart, _ ClearCart) ([]any, error) {
			if len(c.Items) == 0 {
				return nil, factum.IllegalState("the cart is empty")
			}
			return []any{CartCleared{}}, nil
		}),
	)
}

func (l Limits) quantity(q int) error {
	if q < 1 || q > l.MaxQuantity {
		return factum.IllegalArgument(fmt.Sprintf("quantity %d: want 1 to %d", q, l.MaxQuantity))
	}
	return nil
}
