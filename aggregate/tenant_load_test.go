package aggregate_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/eventstore"
)

// A command naming another tenant's aggregate is refused as for a missing
// one before that tenant's history or snapshot is decoded: a history that
// does not decode (or a snapshot that does not) must not answer the
// command with its failure, which names that tenant's events.
func TestOtherTenantRefusedBeforeItsHistoryDecodes(t *testing.T) {
	owner := accounts.ID("poisoned").WithTenant("t1")
	cases := []struct {
		name   string
		bodies []string // the owner's streams, one event each
		snap   *aggregate.StoredState
	}{
		{"history", []string{`{"Amount":1}`, `{"Amount":"many"}`}, nil},
		{"snapshot", []string{`{"Amount":1}`}, &aggregate.StoredState{ID: owner, Version: 1, State: json.RawMessage(`{"Balance":"many"}`)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := eventstore.NewMemory()
			for i, body := range c.bodies {
				s := &factum.EventStream{ID: factum.NewID(), AggregateID: owner, Version: i + 1, CommandID: factum.NewID(),
					RequestID: factum.NewID(), CreateTime: time.Now(),
					Events: []factum.DomainEvent{{ID: factum.NewID(), Name: factum.NameOf(deposited{}), Sequence: 1, IsLast: true, Body: json.RawMessage(body)}}}
				if err := store.Append(context.Background(), s); err != nil {
					t.Fatal(err)
				}
			}
			cfg := aggregate.ExecutorConfig{}
			if c.snap != nil {
				cfg.Snapshots = &snapshots{st: *c.snap}
			}
			p := newProc(t, store, cfg)
			for _, create := range []bool{false, true} {
				cmd := factum.NewCommand(owner.WithTenant("t2"), deposit{Amount: 1})
				cmd.AllowCreate, cmd.IsCreate = true, create
				sig := p.Process(context.Background(), &cmd)
				want, msg := factum.CodeNotFound, "aggregate not found"
				if create {
					want, msg = factum.CodeDuplicateAggregateID, "aggregate ID is taken"
				}
				if sig.Code != want || sig.Message != msg || sig.AggregateVersion != 0 || strings.Contains(sig.Message, "deposited") {
					t.Fatalf("create=%v: signal %+v, want %s %q and nothing of the owner's history", create, sig, want, msg)
				}
			}
		})
	}
}
