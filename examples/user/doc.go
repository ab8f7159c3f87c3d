// Package user is an example of a unique application key: users register
// with a username that no other user of their tenant may hold, reserved
// with a prepare.Key through prepare.UsingPrepare, and rename through the
// key change. Usernames are per tenant (Usernames makes the key with
// prepare.PerTenant): the handlers' contexts carry the command's tenant,
// so each tenant has its own namespace of names and cannot probe
// another's.
//
// The reservation's value is the user ID. A registration sent without a
// user ID gets one derived from its request ID, so a retried registration
// whose first attempt reserved the name but never appended its event (a
// crash in between) finds the name held by its own ID and goes on, instead
// of being refused as a duplicate of itself.
//
// What prepare keys do not do: they are not a transaction with the event
// store. A registration refused after the reservation (by the store, for a
// competing request) releases it through UsingPrepare only if the handler
// fails; a failure after the handler returned leaves the name held by an ID
// that has no user. Such a name can be found by comparing reservations
// with users and released with Key.RollbackValue.
package user
