// Package cart is an example domain: a shopping cart aggregate with its
// rules (quantities between 1 and a maximum, at most N distinct items,
// unknown items refused, removing or changing only what is in the cart,
// clearing only a non-empty cart), and its spec in cart_test.go, which
// covers each rule's success and rejection and the delete/recover branch.
package cart
