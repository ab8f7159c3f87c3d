// Package order is an example domain of two aggregates joined by a saga:
// an order reserves stock in an inventory aggregate, and the inventory's
// reply event confirms or rejects the order.
//
//	PlaceOrder ─► order: OrderPlaced ─► saga ─► ReserveStock ─► inventory
//	                                                             │
//	order ◄─ ConfirmOrder / RejectOrder ◄─ saga ◄─ StockReserved / ReservationFailed
//
// The order never reads the inventory and the inventory never reads the
// order: each aggregate protects its own invariants, and the saga carries
// the decisions between them with request IDs derived from the events, so a
// redelivered event cannot reserve twice. The saga waits until each of its
// commands is decided before its consumer moves on, so a crash never
// leaves an order pending for a step that was lost; a command the target
// refuses (say, the SKU's inventory was deleted) is a failure recorded for
// compensation, with the refusal's code. Summaries is a projection of
// orders for queries.
package order
