// Package user is an example of a unique application key: users register
// with a username that no other user of their tenant may hold, and rename
// to another free one. The usernames are reservations on a prepare.Key
// whose value is the user ID. Usernames are per tenant (Usernames makes
// the key with prepare.PerTenant): the handlers' contexts carry the
// command's tenant, so each tenant has its own namespace of names and
// cannot probe another's.
//
// The handlers do not touch the reservations themselves: they bind them to
// their command's append with aggregate.Bind (Key.Reserve for a
// registration, Key.Change for a rename). The processor makes the
// reservation before the append, undoes it if the append fails or is
// retried (a version conflict re-runs the handler on the reloaded state),
// and keeps it once the event is stored. So events, reservations and state
// agree even when two instances with stale caches rename the same user.
//
// A registration sent without a user ID gets one derived from its request
// ID, so a retried registration whose first attempt reserved the name but
// never appended its event (a crash in between) finds the name held by its
// own ID and goes on, instead of being refused as a duplicate of itself.
//
// What binding does not do: it is not a transaction with the event store.
// A crash between the reservation and the append leaves the name held by
// an ID with no user (until a retry of the same request uses it); such a
// name can be found by comparing reservations with users and released with
// Key.RollbackValue.
package user
