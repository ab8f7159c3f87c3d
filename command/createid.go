package command

import "github.com/factum-go/factum"

// CreateID returns the aggregate ID the gateway gives a create command sent
// without one: a UUIDv5 of the aggregate type, the tenant and the request
// ID. A retried create (same tenant, same request ID) finds its first
// attempt; the same request ID in another tenant names another aggregate,
// so it runs that tenant's own command and can neither reach nor reveal
// the first tenant's aggregate.
func CreateID(named factum.NamedAggregate, tenant, requestID string) string {
	if tenant == "" {
		tenant = factum.DefaultTenant
	}
	return factum.DeriveID(named.Context, named.Aggregate, tenant, requestID)
}
