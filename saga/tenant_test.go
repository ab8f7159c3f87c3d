package saga_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/saga"
)

// tenantSender decides every command at once and records the tenant of
// the context each command was sent with, by the command's aggregate ID.
type tenantSender struct {
	mu   sync.Mutex
	sent map[string]string
}

func (s *tenantSender) SendAndWait(ctx context.Context, c factum.Command, p command.WaitPlan) (command.Result, error) {
	tenant, _ := factum.TenantFromContext(ctx)
	s.mu.Lock()
	s.sent[c.AggregateID.ID] = tenant
	s.mu.Unlock()
	return okSender{}.SendAndWait(ctx, c, p)
}

// A saga's function, and the sends it makes, run with the tenant of the
// stream that started them in their context, as tenants alternate on a
// consumer's lanes.
func TestSagaRunsInItsStreamsTenant(t *testing.T) {
	for _, concurrency := range []int{1, 3} {
		t.Run(fmt.Sprint("concurrency ", concurrency), func(t *testing.T) {
			var mu sync.Mutex
			saw := map[string]string{} // the function's context's tenant, by order ID
			s := saga.New("shop", "tenants", saga.On(func(ctx context.Context, _ event.Message, e OrderPlaced) ([]factum.Command, error) {
				tenant, _ := factum.TenantFromContext(ctx)
				mu.Lock()
				saw[e.OrderID] = tenant
				mu.Unlock()
				return []factum.Command{factum.NewCommand(stock.WithID(e.OrderID), Reserve{OrderID: e.OrderID})}, nil
			}))
			send := &tenantSender{sent: map[string]string{}}
			p, err := s.Processor(codec.NewRegistry(), send)
			if err != nil {
				t.Fatal(err)
			}
			st := eventstore.NewMemory()
			tenants := []string{"acme", "globex", factum.DefaultTenant}
			want := map[string]string{} // the stream's tenant, by order ID
			for i := range 9 {
				id := fmt.Sprint("o", i)
				want[id] = tenants[i%len(tenants)]
				if err := st.Append(t.Context(), &factum.EventStream{ID: factum.NewID(), AggregateID: stock.WithID(id).WithTenant(want[id]), Version: 1,
					CommandID: factum.NewID(), RequestID: factum.NewID(), Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "order_placed", Sequence: 1, IsLast: true,
						Body: []byte(`{"orderId":"` + id + `"}`)}}}); err != nil {
					t.Fatal(err)
				}
			}
			signals := make(chan factum.Signal, len(want))
			c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), Concurrency: concurrency,
				Notify: func(s factum.Signal) { signals <- s }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx) }()
			for range want {
				if sig := <-signals; !sig.Succeeded() {
					t.Fatalf("%+v", sig)
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for id, tenant := range want {
				if saw[id] != tenant {
					t.Errorf("order %s of tenant %s: the saga saw tenant %q", id, tenant, saw[id])
				}
				if send.sent[id] != tenant {
					t.Errorf("order %s of tenant %s: its command was sent in tenant %q", id, tenant, send.sent[id])
				}
			}
		})
	}
}
