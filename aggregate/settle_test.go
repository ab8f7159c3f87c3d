package aggregate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/eventstore"
)

// otherTenantLookup is a store whose appends end with an unknown outcome,
// nothing appended, and whose Lookup answers any request with a stream of
// the same aggregate ID in another tenant: a store that fails to scope its
// lookups by tenant.
type otherTenantLookup struct {
	faultyStore
	other string
}

func (s *otherTenantLookup) Lookup(_ context.Context, id factum.AggregateID, requestID string) (factum.EventStream, error) {
	return factum.EventStream{
		ID: factum.NewID(), AggregateID: id.WithTenant(s.other), Version: 7,
		CommandID: factum.NewID(), RequestID: requestID, CreateTime: time.Now(),
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "deposited", Sequence: 1, IsLast: true}},
	}, nil
}

// An append whose outcome is unknown is not settled by another tenant's
// stream that the store's lookup answers: the command's outcome is not
// that stream's (its version, its duplicate), whatever the lookup says.
func TestUnknownOutcomeIgnoresAnotherTenantsStream(t *testing.T) {
	for _, c := range []struct{ tenant, other string }{
		{factum.DefaultTenant, "globex"},
		{"acme", factum.DefaultTenant},
		{"acme", "globex"},
	} {
		t.Run(c.tenant+" answered "+c.other, func(t *testing.T) {
			store := &otherTenantLookup{other: c.other, faultyStore: faultyStore{Store: eventstore.NewMemory(),
				fail: func(int) (error, bool) { return errors.New("injected: connection lost during commit"), false }}}
			p := newProc(t, store, aggregate.ExecutorConfig{Backoff: time.Microsecond})
			cmd := factum.NewCommand(accounts.ID("a-1").WithTenant(c.tenant), deposit{Amount: 1})
			cmd.AllowCreate = true
			sig := p.Process(context.Background(), &cmd)
			if sig.Succeeded() || sig.AggregateVersion == 7 || sig.Duplicate || len(sig.EventNames) > 0 {
				t.Fatalf("%+v: the outcome of another tenant's stream", sig)
			}
			if sig.Code != factum.CodeInternalServerError {
				t.Fatalf("code %s (%s), want the append's InternalServerError", sig.Code, sig.Message)
			}
			if strings.Contains(sig.Message, c.other) {
				t.Fatalf("message %q names the other tenant", sig.Message)
			}
		})
	}
}
