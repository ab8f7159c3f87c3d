package telemetry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

// errChecked is checkingStore's refusal.
var errChecked = errors.New("refused by the wrapper's own check")

// checkingStore is a user's wrapper adding a check of its own to the
// memory store's Append. The memory store's AppendBuilt is promoted into
// it and would skip that check: the executor's streams must reach its
// Append.
type checkingStore struct{ *eventstore.Memory }

func (c *checkingStore) Append(context.Context, *factum.EventStream) error { return errChecked }

// The Store decorator passes the executor's streams on as the executor's
// to a store that appends them so, which skips the checks that cannot
// fail for them (a body's JSON among them: the executor encoded it), and
// through Append, with every check, to one that does not (a user's
// wrapper overriding Append among them, into which the store it wraps
// promotes its AppendBuilt); the append is observed either way.
func TestTheStoreDecoratorKeepsTheExecutorsAppend(t *testing.T) {
	for _, tc := range []struct {
		name string
		next eventstore.Store
		want error // for a built stream whose body is not JSON
	}{
		{"built appender", eventstore.NewMemory(), nil},
		{"plain store", struct{ eventstore.Store }{eventstore.NewMemory()}, factum.ErrIllegalArgument},
		{"wrapper overriding Append", &checkingStore{Memory: eventstore.NewMemory()}, errChecked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			tel, err := telemetry.New(telemetry.Config{Registerer: reg})
			if err != nil {
				t.Fatal(err)
			}
			a := built.Of(tel.Store(tc.next))
			if a == nil {
				t.Fatal("the decorated store appends no built streams")
			}
			id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1")
			st := &factum.EventStream{ID: factum.NewID(), AggregateID: id, Version: 1, CommandID: factum.NewID(), RequestID: factum.NewID(),
				Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "opened", Sequence: 1, IsLast: true, Body: []byte(`{"a":`)}}}
			if err := a.AppendBuilt(context.Background(), built.Mark(st)); !errors.Is(err, tc.want) {
				t.Fatalf("AppendBuilt: %v, want %v", err, tc.want)
			}
			outcome := "Ok"
			switch {
			case errors.Is(tc.want, factum.ErrIllegalArgument):
				outcome = "IllegalArgument"
			case tc.want != nil:
				outcome = "InternalServerError"
			}
			m := sample(scrape(t, reg), "factum_store_append_duration_seconds", map[string]string{"backend": "memory", "outcome": outcome})
			if got := m.GetHistogram().GetSampleCount(); got != 1 {
				t.Errorf("appends observed with outcome %s: %d, want 1", outcome, got)
			}
		})
	}
}
