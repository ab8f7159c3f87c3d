package order

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/saga"
)

// Fulfilment is the saga between orders and inventory: a placed order
// reserves stock, and the inventory's answer confirms or rejects the order.
var Fulfilment = saga.New(Context, "fulfilment",
	saga.On(func(_ context.Context, _ event.Message, e OrderPlaced) ([]factum.Command, error) {
		return []factum.Command{factum.NewCommand(Inventory.ID(e.SKU), ReserveStock{OrderID: e.OrderID, Qty: e.Qty})}, nil
	}),
	saga.On(func(_ context.Context, _ event.Message, e StockReserved) ([]factum.Command, error) {
		return []factum.Command{factum.NewCommand(Orders.ID(e.OrderID), ConfirmOrder{})}, nil
	}),
	saga.On(func(_ context.Context, _ event.Message, e ReservationFailed) ([]factum.Command, error) {
		reason := fmt.Sprintf("only %d of %s available, %d ordered", e.Available, e.SKU, e.Qty)
		return []factum.Command{factum.NewCommand(Orders.ID(e.OrderID), RejectOrder{Reason: reason})}, nil
	}),
)
