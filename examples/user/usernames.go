package user

import "github.com/factum-go/factum/prepare"

// Usernames returns the username reservations on backend, for New: a
// prepare.PerTenant key, so a username is unique within its tenant and the
// same name is free in every other. One tenant can then neither take a
// name from another nor learn, by trying to register it, which names
// another tenant's users hold.
func Usernames(backend prepare.Backend) (*prepare.Key[string], error) {
	return prepare.NewKey[string]("username", backend, prepare.PerTenant())
}
