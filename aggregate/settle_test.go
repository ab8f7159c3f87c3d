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

// otherStreamLookup is a store whose appends fail as faultyStore's do and
// whose Lookup answers every request with a stream of another aggregate,
// the one answer makes of the aggregate asked for: a store that fails to
// scope its lookups (by tenant, ID or type).
type otherStreamLookup struct {
	faultyStore
	answer func(factum.AggregateID) factum.AggregateID
}

func (s *otherStreamLookup) Lookup(_ context.Context, id factum.AggregateID, requestID string) (factum.EventStream, error) {
	return factum.EventStream{
		ID: factum.NewID(), AggregateID: s.answer(id), Version: 7,
		CommandID: factum.NewID(), RequestID: requestID, CreateTime: time.Now(),
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "deposited", Sequence: 1, IsLast: true}},
	}, nil
}

// An append whose outcome is unknown is not settled by a stream of
// another aggregate (another tenant's, another ID, another type) that the
// store's lookup answers: the command's outcome is not that stream's (its
// version, its duplicate), whatever the lookup says.
func TestUnknownOutcomeIgnoresAnotherAggregatesStream(t *testing.T) {
	for _, c := range []struct {
		name, tenant string
		answer       func(factum.AggregateID) factum.AggregateID
	}{
		{"default answered globex", factum.DefaultTenant, func(id factum.AggregateID) factum.AggregateID { return id.WithTenant("globex") }},
		{"acme answered default", "acme", func(id factum.AggregateID) factum.AggregateID { return id.WithTenant(factum.DefaultTenant) }},
		{"acme answered globex", "acme", func(id factum.AggregateID) factum.AggregateID { return id.WithTenant("globex") }},
		{"another ID", "acme", func(id factum.AggregateID) factum.AggregateID { id.ID = "a-2"; return id }},
		{"another type", "acme", func(id factum.AggregateID) factum.AggregateID { id.Aggregate = "ledger"; return id }},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := &otherStreamLookup{answer: c.answer, faultyStore: faultyStore{Store: eventstore.NewMemory(),
				fail: func(int) (error, bool) { return errors.New("injected: connection lost during commit"), false }}}
			p := newProc(t, store, aggregate.ExecutorConfig{Backoff: time.Microsecond})
			cmd := factum.NewCommand(accounts.ID("a-1").WithTenant(c.tenant), deposit{Amount: 1})
			cmd.AllowCreate = true
			sig := p.Process(context.Background(), &cmd)
			if sig.Succeeded() || sig.AggregateVersion == 7 || sig.Duplicate || len(sig.EventNames) > 0 {
				t.Fatalf("%+v: the outcome of another aggregate's stream", sig)
			}
			if sig.Code != factum.CodeInternalServerError {
				t.Fatalf("code %s (%s), want the append's InternalServerError", sig.Code, sig.Message)
			}
			if strings.Contains(sig.Message, "globex") || strings.Contains(sig.Message, "a-2") || strings.Contains(sig.Message, "ledger") {
				t.Fatalf("message %q names the other aggregate", sig.Message)
			}
		})
	}
}
