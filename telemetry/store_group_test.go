package telemetry_test

import (
	"context"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

// groupMemory is a memory store appending groups, atomically enough for
// a test: one mutex around appending a group's streams, which here never
// fail.
type groupMemory struct {
	*eventstore.Memory
	mu     sync.Mutex
	groups []int
}

func (g *groupMemory) BuiltOwner() built.Owner { return built.OwnedBy(g) }
func (g *groupMemory) AppendsGroups() bool     { return true }

func (g *groupMemory) AppendBuiltGroup(ctx context.Context, ss []built.Stream) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.groups = append(g.groups, len(ss))
	for _, s := range ss {
		if err := g.Memory.AppendBuilt(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// The Store decorator serves groups when the store it decorates does,
// passes each on as one call and observes it as one append; over a store
// without groups it serves none (built.GroupOf finds none).
func TestTheStoreDecoratorPassesGroupsOn(t *testing.T) {
	reg := prometheus.NewRegistry()
	tel, err := telemetry.New(telemetry.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if built.GroupOf(tel.Store(struct{ eventstore.Store }{eventstore.NewMemory()})) != nil {
		t.Fatal("the decorator of a store without groups serves groups")
	}
	next := &groupMemory{Memory: eventstore.NewMemory()}
	g := built.GroupOf(tel.Store(next))
	if g == nil {
		t.Fatal("the decorator of a store appending groups serves none")
	}
	id := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}.WithID("c-1").WithTenant(factum.DefaultTenant)
	var ss []built.Stream
	for v := 1; v <= 3; v++ {
		rid := factum.NewID()
		ss = append(ss, built.Mark(&factum.EventStream{ID: factum.NewID(), AggregateID: id, Version: v, CommandID: rid, RequestID: rid,
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "added", Sequence: 1, IsLast: true, Body: []byte(`{}`)}}}))
	}
	if err := g.AppendBuiltGroup(context.Background(), ss); err != nil {
		t.Fatal(err)
	}
	if len(next.groups) != 1 || next.groups[0] != 3 {
		t.Fatalf("the store got groups %v, want one of 3", next.groups)
	}
	got, err := next.Load(context.Background(), id, 1, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("stored %d streams (%v), want 3", len(got), err)
	}
	m := sample(scrape(t, reg), "factum_store_append_duration_seconds", map[string]string{"backend": "memory", "outcome": "Ok"})
	if n := m.GetHistogram().GetSampleCount(); n != 1 {
		t.Errorf("appends observed: %d, want the group as 1", n)
	}
}
