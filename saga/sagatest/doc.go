// Package sagatest tests sagas without a runtime: When an event happens,
// Expect the commands the saga sends (by type and value), none, or an error.
//
//	sagatest.For(t, sagas.Reservation).
//		When(order.OrderPlaced{OrderID: "o-1", SKU: "sku-1", Qty: 2}).
//		ExpectCommands(inventory.Reserve{OrderID: "o-1", SKU: "sku-1", Qty: 2})
package sagatest
