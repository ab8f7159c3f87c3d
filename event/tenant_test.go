package event_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/prepare"
)

// appendTenantStream appends a one-event stream of tenant's aggregate id.
func appendTenantStream(t *testing.T, st eventstore.Store, tenant, id, name string) *factum.EventStream {
	t.Helper()
	s := &factum.EventStream{
		ID: factum.NewID(), AggregateID: carts.WithID(id).WithTenant(tenant), Version: 1,
		CommandID: factum.NewID(), RequestID: factum.NewID(),
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: name, Sequence: 1, IsLast: true, Body: []byte(`{"sku":"s"}`)}},
	}
	if err := st.Append(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// tenantSeen is what a function saw of one stream: the tenant in its
// context and whether its per-tenant reservation of the same key took.
type tenantSeen struct {
	tenant   string
	ok       bool
	prepared bool
}

// An event function runs with its stream's tenant in its context, on one
// lane or several, under middleware that adds a value, and under
// middleware that puts another tenant in the context; so a
// prepare.PerTenant key reserved in the function is reserved per tenant.
func TestFunctionsSeeTheirStreamsTenant(t *testing.T) {
	addsValue := func(_ *event.Handler, next event.StreamFunc) event.StreamFunc {
		return func(ctx context.Context, s *factum.EventStream) error {
			return next(context.WithValue(ctx, workMark{}, "span"), s)
		}
	}
	setsOther := func(_ *event.Handler, next event.StreamFunc) event.StreamFunc {
		return func(ctx context.Context, s *factum.EventStream) error {
			return next(factum.ContextWithTenant(context.WithoutCancel(ctx), "other"), s)
		}
	}
	for _, c := range []struct {
		name        string
		concurrency int
		mw          []event.Middleware
	}{
		{"one lane", 1, nil},
		{"four lanes", 4, nil},
		{"middleware adds a value", 1, []event.Middleware{addsValue}},
		{"middleware sets another tenant", 1, []event.Middleware{setsOther}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := eventstore.NewMemory()
			key, err := prepare.NewKey[string]("usernames", prepare.NewMemory(prepare.MemoryConfig{}), prepare.PerTenant())
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			seen := map[string]tenantSeen{} // by stream ID
			p := event.MustProcessor("shop", "tenants", factum.StageEventHandled,
				event.OnStream("reserve", func(ctx context.Context, s *factum.EventStream) error {
					tenant, ok := factum.TenantFromContext(ctx)
					prepared, err := key.Prepare(ctx, "alice", prepare.Forever(s.AggregateID.ID))
					if err != nil {
						return err
					}
					mu.Lock()
					defer mu.Unlock()
					seen[s.ID] = tenantSeen{tenant: tenant, ok: ok, prepared: prepared}
					return nil
				}, []string{"item_added"}))
			cons, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(),
				Concurrency: c.concurrency, Middleware: c.mw, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			// Tenants alternate, and each reserves "alice" once; enough
			// streams for a batch on four lanes.
			tenants := []string{"acme", "globex", factum.DefaultTenant}
			var streams []*factum.EventStream
			for i := range 4 * len(tenants) {
				tenant := tenants[i%len(tenants)]
				streams = append(streams, appendTenantStream(t, st, tenant, fmt.Sprint("c", i), "item_added"))
			}
			start(t, cons)
			waitFor(t, "every stream", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(seen) == len(streams)
			})
			mu.Lock()
			defer mu.Unlock()
			reserved := map[string]int{}
			for _, s := range streams {
				got, want := seen[s.ID], s.AggregateID.TenantOrDefault()
				if !got.ok || got.tenant != want {
					t.Errorf("stream of tenant %s: the function saw tenant %q (set: %v)", want, got.tenant, got.ok)
				}
				if got.prepared {
					reserved[want]++
				}
			}
			for _, tenant := range tenants {
				if reserved[tenant] != 1 {
					t.Errorf("tenant %s reserved \"alice\" %d times, want once: %v", tenant, reserved[tenant], reserved)
				}
				v, ok, err := key.Get(factum.ContextWithTenant(context.Background(), tenant), "alice")
				if err != nil || !ok {
					t.Errorf("tenant %s: \"alice\" not reserved (%v, %v)", tenant, ok, err)
					continue
				}
				if owner := streamOf(streams, v.Value); owner == nil || owner.AggregateID.TenantOrDefault() != tenant {
					t.Errorf("tenant %s: \"alice\" is reserved for another tenant's aggregate %s", tenant, v.Value)
				}
			}
		})
	}
}

// streamOf returns the stream of aggregate id among streams.
func streamOf(streams []*factum.EventStream, id string) *factum.EventStream {
	for _, s := range streams {
		if s.AggregateID.ID == id {
			return s
		}
	}
	return nil
}

// Redeliver and Invoke, as a live delivery, give the function its
// stream's tenant, whatever tenant the caller's context carries.
func TestRedeliveryAndInvokeSeeTheStreamsTenant(t *testing.T) {
	st := eventstore.NewMemory()
	got := make(chan string, 1)
	p := event.MustProcessor("shop", "tenants", factum.StageEventHandled,
		event.OnStream("see", func(ctx context.Context, _ *factum.EventStream) error {
			tenant, _ := factum.TenantFromContext(ctx)
			got <- tenant
			return nil
		}, []string{"item_added"}))
	cons, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints()})
	if err != nil {
		t.Fatal(err)
	}
	s := &factum.EventStream{ID: factum.NewID(), AggregateID: carts.WithID("c").WithTenant("acme"), Version: 1,
		Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true}}}
	h := p.Handlers()[0]
	for _, c := range []struct {
		name string
		call func(context.Context) error
	}{
		{"Redeliver", func(ctx context.Context) error {
			_, err := cons.Redeliver(ctx, h.Function, s, 0)
			return err
		}},
		{"Invoke", func(ctx context.Context) error { return event.Invoke(ctx, h, s, 0) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(factum.ContextWithTenant(context.Background(), "globex")); err != nil {
				t.Fatal(err)
			}
			if tenant := <-got; tenant != "acme" {
				t.Fatalf("the function saw tenant %q, want the stream's acme", tenant)
			}
		})
	}
}

// When a stream is skipped by some of the functions (they want none of
// its events), the functions that take it still see its tenant and
// report their results on its signal, as tenants and functions
// alternate, under the consumer's defaults alone and under middleware
// that adds a value to the context.
func TestSkippedFunctionsLeaveTenantsAndResultsRight(t *testing.T) {
	addsValue := func(_ *event.Handler, next event.StreamFunc) event.StreamFunc {
		return func(ctx context.Context, s *factum.EventStream) error {
			return next(context.WithValue(ctx, workMark{}, "span"), s)
		}
	}
	for _, c := range []struct {
		name string
		mw   []event.Middleware
	}{
		{"defaults", nil},
		{"middleware adds a value", []event.Middleware{addsValue}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := eventstore.NewMemory()
			var mu sync.Mutex
			var signals []factum.Signal
			see := func(ctx context.Context, s *factum.EventStream) error {
				tenant, _ := factum.TenantFromContext(ctx)
				event.AddResult(ctx, "tenant", tenant)
				event.AddResult(ctx, "stream", s.ID)
				return nil
			}
			p := event.MustProcessor("shop", "tenants", factum.StageEventHandled,
				event.OnStream("added", see, []string{"item_added"}),
				event.OnStream("removed", see, []string{"item_removed"}))
			cons, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(),
				Middleware: c.mw, Logger: quiet, Notify: func(s factum.Signal) {
					mu.Lock()
					signals = append(signals, s)
					mu.Unlock()
				}})
			if err != nil {
				t.Fatal(err)
			}
			tenants := []string{"acme", "globex", factum.DefaultTenant, "acme"}
			names := []string{"item_added", "item_removed", "item_removed", "item_added", "item_added"}
			byID := map[string]*factum.EventStream{}
			for i := range 12 {
				s := appendTenantStream(t, st, tenants[i%len(tenants)], fmt.Sprint("c", i), names[i%len(names)])
				byID[s.ID] = s
			}
			start(t, cons)
			waitFor(t, "every stream's signal", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(signals) == len(byID)
			})
			mu.Lock()
			defer mu.Unlock()
			for _, sig := range signals {
				stream, _ := sig.Results["stream"].(string)
				s := byID[stream]
				if s == nil || s.AggregateID != sig.AggregateID {
					t.Errorf("signal of %s carries the results of stream %q", sig.AggregateID, stream)
					continue
				}
				if want := map[string]string{"item_added": "added", "item_removed": "removed"}[s.Events[0].Name]; sig.Function.Name != want {
					t.Errorf("stream %s of %s signalled by %s, want %s", s.ID, s.Events[0].Name, sig.Function.Name, want)
				}
				if got := sig.Results["tenant"]; got != s.AggregateID.TenantOrDefault() {
					t.Errorf("stream of tenant %s: the function saw tenant %v", s.AggregateID.TenantOrDefault(), got)
				}
			}
		})
	}
}
