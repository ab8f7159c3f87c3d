// Package eventstoretest is the contract kit for event stores: every
// implementation of eventstore.Store, in factum or outside it, proves itself
// by calling [Run] from a test:
//
//	func TestContract(t *testing.T) {
//		eventstoretest.Run(t, func(t *testing.T) eventstore.Store { return newMyStore(t) })
//	}
//
// The kit covers the round trip of every field, each append conflict and its
// precedence, tenants sealed off from each other (a request ID another
// tenant used is a TenantMismatch on append and unknown to Lookup and
// RequestExists, and no error names the owner), ranges, lookups, scans, the
// global log and its waiting, concurrent appends, and the group appends
// of the aggregate executor (several streams of one aggregate, all or
// none: built.GroupAppender), which it skips for a store whose backend
// appends no groups. It never assumes that the store is empty: each case
// uses aggregate types and IDs of its own. Every case uses the bounded
// context "kit", so a store that serves one context (the SQL adapters keep
// each context in tables of its own) is created for that context.
package eventstoretest
