package eventstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoretest"
)

// The front end's generic fallbacks keep the whole contract: a backend of
// the three required methods alone is a complete event store.
func TestFallbacksContract(t *testing.T) {
	eventstoretest.Run(t, func(t *testing.T) eventstore.Store {
		f, err := eventstore.New(eventstoretest.Plain(eventstore.NewMemory().Backend()), eventstore.Config{PollInterval: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return f
	})
}

// A front end serving one bounded context refuses identities of another on
// every path, before its backend sees them.
func TestFrontRefusesOtherContexts(t *testing.T) {
	f, err := eventstore.New(eventstoretest.Plain(eventstore.NewMemory().Backend()), eventstore.Config{Context: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := factum.NamedAggregate{Context: "billing", Aggregate: "invoice"}.WithID("i-1")
	s := &factum.EventStream{ID: factum.NewID(), AggregateID: id, Version: 1, CommandID: factum.NewID(), RequestID: "r",
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "opened", Sequence: 1, IsLast: true, Body: []byte(`{}`)}}}
	_, loadErr := f.Load(ctx, id, 1, 1)
	_, timeErr := f.LoadByTime(ctx, id, time.Time{}, time.Now())
	_, lookupErr := f.Lookup(ctx, id, "r")
	_, existsErr := f.RequestExists(ctx, id, "r")
	_, scanErr := f.ScanAggregateIDs(ctx, id.NamedAggregate, "", 1)
	for name, err := range map[string]error{
		"Append": f.Append(ctx, s), "Load": loadErr, "LoadByTime": timeErr,
		"Lookup": lookupErr, "RequestExists": existsErr, "ScanAggregateIDs": scanErr,
	} {
		if !errors.Is(err, factum.ErrIllegalArgument) {
			t.Errorf("%s of another context: %v, want IllegalArgument", name, err)
		}
	}
	if page, err := f.ReadLog(ctx, factum.Position{}, 10); err != nil || len(page) != 0 {
		t.Fatalf("the refused append reached the log: %v, %v", page, err)
	}
	if _, err := eventstore.New(nil, eventstore.Config{}); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("New(nil): %v, want IllegalArgument", err)
	}
	if _, err := eventstore.New(eventstoretest.Plain(nil), eventstore.Config{PollInterval: -1}); !errors.Is(err, factum.ErrIllegalArgument) {
		t.Errorf("negative PollInterval: %v, want IllegalArgument", err)
	}
}
