package snapshot

import (
	"fmt"

	"github.com/factum-go/factum"
)

// The front end builds the errors every Store reports from these, so that
// backends agree on codes, identities and messages.

// NotFound returns the error Load reports when the aggregate has no
// snapshot.
func NotFound(id factum.AggregateID) error {
	return factum.NotFound(fmt.Sprintf("no snapshot of %s", id)).With(id, 0, "", "")
}

// tenantMismatch returns the error Save and Load report when the stored
// snapshot of the aggregate belongs to another tenant than id's. It names
// only id: the tenant that owns the aggregate is that tenant's data.
func tenantMismatch(id factum.AggregateID) error {
	return factum.Errorf(factum.CodeTenantMismatch, "aggregate %s does not belong to tenant %q",
		id.NamedAggregate.String()+"/"+id.ID, id.TenantOrDefault()).With(id, 0, "", "")
}
