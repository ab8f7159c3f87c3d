package snapshot

import (
	"fmt"

	"github.com/factum-go/factum"
)

// The constructors below build the errors every Store reports, so that
// backends agree on codes, identities and messages.

// NotFound returns the error Load reports when the aggregate has no
// snapshot.
func NotFound(id factum.AggregateID) error {
	return factum.NotFound(fmt.Sprintf("no snapshot of %s", id)).With(id, 0, "", "")
}

// TenantMismatch returns the error Save and Load report when the stored
// snapshot of the aggregate belongs to the tenant stored, not id's.
func TenantMismatch(id factum.AggregateID, stored string) error {
	return factum.Errorf(factum.CodeTenantMismatch, "aggregate %s belongs to tenant %q, not %q",
		id.NamedAggregate.String()+"/"+id.ID, stored, id.TenantOrDefault()).With(id, 0, "", "")
}
