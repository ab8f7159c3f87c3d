package projection_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/projection"
)

// A projection's function runs with its stream's tenant in its context
// (factum.TenantFromContext), as every event function does: on the
// runner's deliveries, with and without middleware, and on a retry
// (Runner.Retry, compensation's Redeliver) whatever tenant the caller's
// context or the middleware carries.
func TestProjectionFunctionsSeeTheirStreamsTenant(t *testing.T) {
	addsValue := func(_ *event.Handler, next event.StreamFunc) event.StreamFunc {
		return func(ctx context.Context, s *factum.EventStream) error {
			return next(context.WithValue(ctx, tenantMark{}, "span"), s)
		}
	}
	setsOther := func(_ *event.Handler, next event.StreamFunc) event.StreamFunc {
		return func(ctx context.Context, s *factum.EventStream) error {
			return next(factum.ContextWithTenant(ctx, "other"), s)
		}
	}
	for _, c := range []struct {
		name string
		mw   []event.Middleware
	}{
		{"without middleware", nil},
		{"middleware adds a value", []event.Middleware{addsValue}},
		{"middleware sets another tenant", []event.Middleware{setsOther}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ps := openSQLite(t)
			ctx := context.Background()
			log := eventstore.NewMemory()
			tenants := []string{"acme", "globex", factum.DefaultTenant, "acme"}
			var streams []factum.EventStream
			for i, tenant := range tenants {
				s := itemAddedStream(carts.WithID("cart-"+tenant+string(rune('a'+i))).WithTenant(tenant), 1)
				if err := log.Append(ctx, &s); err != nil {
					t.Fatal(err)
				}
				streams = append(streams, s)
			}
			var mu sync.Mutex
			seen := map[string][]string{} // the tenants each stream's calls saw, by stream ID
			failFirst := streams[0].ID
			p, err := projection.New("shop", "tenants",
				func(ctx context.Context, _ projection.Tx, s *factum.EventStream) error {
					tenant, _ := factum.TenantFromContext(ctx)
					mu.Lock()
					defer mu.Unlock()
					seen[s.ID] = append(seen[s.ID], tenant)
					if s.ID == failFirst && len(seen[s.ID]) == 1 {
						return factum.IllegalState("the first call fails")
					}
					return nil
				}, projection.From(carts))
			if err != nil {
				t.Fatal(err)
			}
			r, err := projection.NewRunner(p, projection.Config{Log: log, Store: ps, Attempts: 1, Middleware: c.mw,
				Backoff: time.Millisecond, PollInterval: 10 * time.Millisecond,
				Failures: event.FailureRecorderFunc(func(context.Context, event.Failure) error { return nil })})
			if err != nil {
				t.Fatal(err)
			}
			r.Drain()
			rctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := r.Run(rctx); err != nil {
				t.Fatal(err)
			}
			if err := r.Retry(factum.ContextWithTenant(ctx, "other"), &streams[0]); err != nil {
				t.Fatalf("retry: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, s := range streams {
				want := s.AggregateID.TenantOrDefault()
				calls := 1
				if s.ID == failFirst {
					calls = 2 // the delivery, then the retry
				}
				if len(seen[s.ID]) != calls {
					t.Errorf("stream of tenant %s: %d calls, want %d", want, len(seen[s.ID]), calls)
				}
				for i, got := range seen[s.ID] {
					if got != want {
						t.Errorf("stream of tenant %s: call %d saw tenant %q", want, i+1, got)
					}
				}
			}
		})
	}
}

// tenantMark is a value a test middleware adds to a function's context.
type tenantMark struct{}
