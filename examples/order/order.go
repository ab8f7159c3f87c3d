package order

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
)

// Context is the bounded context of the example.
const Context = "shop"

// MaxQuantity is the most units one order may ask for.
const MaxQuantity = 100

// Status is an order's state in its life cycle.
type Status string

// The order statuses.
const (
	Pending   Status = "pending"
	Confirmed Status = "confirmed"
	Rejected  Status = "rejected"
)

// Order is the order aggregate's state.
type Order struct {
	SKU    string `json:"sku"`
	Qty    int    `json:"qty"`
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// The order's commands.
type (
	// PlaceOrder creates an order for Qty units of SKU.
	PlaceOrder struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	// ConfirmOrder confirms a pending order (sent by the saga).
	ConfirmOrder struct{}
	// RejectOrder rejects a pending order (sent by the saga).
	RejectOrder struct {
		Reason string `json:"reason"`
	}
)

// The order's events.
type (
	// OrderPlaced records PlaceOrder. OrderID repeats the aggregate ID so
	// that consumers need not look at the stream.
	OrderPlaced struct {
		OrderID string `json:"orderId"`
		SKU     string `json:"sku"`
		Qty     int    `json:"qty"`
	}
	// OrderConfirmed records ConfirmOrder.
	OrderConfirmed struct {
		OrderID string `json:"orderId"`
	}
	// OrderRejected records RejectOrder.
	OrderRejected struct {
		OrderID string `json:"orderId"`
		Reason  string `json:"reason"`
	}
)

// Validate checks PlaceOrder before it is sent.
func (c PlaceOrder) Validate() error {
	var errs command.ValidationErrors
	if c.SKU == "" {
		errs = append(errs, factum.BindingError{Field: "sku", Message: "is required"})
	}
	if c.Qty < 1 || c.Qty > MaxQuantity {
		errs = append(errs, factum.BindingError{Field: "qty", Message: fmt.Sprintf("must be 1 to %d", MaxQuantity)})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// Orders is the order aggregate ("shop", "order").
var Orders = aggregate.New[Order](Context, "order",
	aggregate.Source(func(o *Order, e OrderPlaced) { *o = Order{SKU: e.SKU, Qty: e.Qty, Status: Pending} }),
	aggregate.Source(func(o *Order, _ OrderConfirmed) { o.Status = Confirmed }),
	aggregate.Source(func(o *Order, e OrderRejected) { o.Status, o.Reason = Rejected, e.Reason }),

	aggregate.Handle(func(ctx context.Context, _ Order, c PlaceOrder) ([]any, error) {
		if err := c.Validate(); err != nil {
			return nil, factum.IllegalArgument(err.Error())
		}
		return []any{OrderPlaced{OrderID: aggregate.CommandFrom(ctx).AggregateID.ID, SKU: c.SKU, Qty: c.Qty}}, nil
	}, aggregate.Create()),

	aggregate.Handle(func(ctx context.Context, o Order, _ ConfirmOrder) ([]any, error) {
		if o.Status != Pending {
			return nil, factum.IllegalState(fmt.Sprintf("order is %s, not pending", o.Status))
		}
		return []any{OrderConfirmed{OrderID: aggregate.CommandFrom(ctx).AggregateID.ID}}, nil
	}),

	aggregate.Handle(func(ctx context.Context, o Order, c RejectOrder) ([]any, error) {
		if o.Status != Pending {
			return nil, factum.IllegalState(fmt.Sprintf("order is %s, not pending", o.Status))
		}
		return []any{OrderRejected{OrderID: aggregate.CommandFrom(ctx).AggregateID.ID, Reason: c.Reason}}, nil
	}),
)
