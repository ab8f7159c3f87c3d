package order

import (
	"context"
	"fmt"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// Stock is the inventory aggregate's state for one SKU (the aggregate ID).
type Stock struct {
	Available int            `json:"available"`
	Reserved  map[string]int `json:"reserved"` // order ID -> units
}

// The inventory's commands.
type (
	// Restock adds units; it creates the SKU's inventory if needed.
	Restock struct {
		Qty int `json:"qty"`
	}
	// ReserveStock reserves units for an order (sent by the saga). It
	// always records an outcome: StockReserved, or ReservationFailed when
	// too few units are available, so the saga can answer the order.
	ReserveStock struct {
		OrderID string `json:"orderId"`
		Qty     int    `json:"qty"`
	}
)

// The inventory's events.
type (
	// Restocked records Restock.
	Restocked struct {
		Qty int `json:"qty"`
	}
	// StockReserved records a successful reservation.
	StockReserved struct {
		OrderID string `json:"orderId"`
		SKU     string `json:"sku"`
		Qty     int    `json:"qty"`
	}
	// ReservationFailed records a reservation that could not be made.
	ReservationFailed struct {
		OrderID   string `json:"orderId"`
		SKU       string `json:"sku"`
		Qty       int    `json:"qty"`
		Available int    `json:"available"`
	}
)

// Inventory is the inventory aggregate ("shop", "inventory"), one per SKU.
var Inventory = aggregate.New[Stock](Context, "inventory",
	aggregate.Initial(func() Stock { return Stock{Reserved: map[string]int{}} }),
	aggregate.Source(func(s *Stock, e Restocked) { s.Available += e.Qty }),
	aggregate.Source(func(s *Stock, e StockReserved) { s.Available -= e.Qty; s.Reserved[e.OrderID] = e.Qty }),
	aggregate.Emits[Stock, ReservationFailed](),

	aggregate.Handle(func(_ context.Context, _ Stock, c Restock) ([]any, error) {
		if c.Qty < 1 {
			return nil, factum.IllegalArgument("restock quantity must be positive")
		}
		return []any{Restocked(c)}, nil
	}, aggregate.AllowCreate()),

	aggregate.Handle(func(ctx context.Context, s Stock, c ReserveStock) ([]any, error) {
		if c.OrderID == "" || c.Qty < 1 {
			return nil, factum.IllegalArgument("a reservation needs an order ID and a positive quantity")
		}
		if _, done := s.Reserved[c.OrderID]; done {
			return nil, factum.IllegalState(fmt.Sprintf("order %s already holds a reservation", c.OrderID))
		}
		sku := aggregate.CommandFrom(ctx).AggregateID.ID
		if s.Available < c.Qty {
			return []any{ReservationFailed{OrderID: c.OrderID, SKU: sku, Qty: c.Qty, Available: s.Available}}, nil
		}
		return []any{StockReserved{OrderID: c.OrderID, SKU: sku, Qty: c.Qty}}, nil
	}, aggregate.AllowCreate()),
)
