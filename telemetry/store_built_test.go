package telemetry_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

// countingStore is a store counting how the executor's streams reach it:
// through Append, or through AppendBuilt when it declares that method
// its own (builtOwn).
type countingStore struct {
	*eventstore.Memory
	builtOwn        bool
	appends, builts int
}

func (c *countingStore) Append(ctx context.Context, s *factum.EventStream) error {
	c.appends++
	return c.Memory.Append(ctx, s)
}

func (c *countingStore) AppendBuilt(ctx context.Context, b built.Stream) error {
	c.builts++
	return c.Memory.AppendBuilt(ctx, b)
}

func (c *countingStore) BuiltOwner() built.Owner {
	if c.builtOwn {
		return built.OwnedBy(c)
	}
	return built.OwnedBy(c.Memory) // promoted from the store it wraps: not its own
}

// The Store decorator passes the executor's streams on as the executor's
// to a store that appends them so (which skips the checks that cannot
// fail for them), and through Append to one that does not, with the
// append counted either way.
func TestTheStoreDecoratorKeepsTheExecutorsAppend(t *testing.T) {
	for _, tc := range []struct {
		name            string
		builtOwn        bool
		appends, builts int
	}{
		{"built appender", true, 0, 1},
		{"plain store", false, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			tel, err := telemetry.New(telemetry.Config{Registerer: reg})
			if err != nil {
				t.Fatal(err)
			}
			next := &countingStore{Memory: eventstore.NewMemory(), builtOwn: tc.builtOwn}
			p, err := order.Inventory.NewExecutor(aggregate.ExecutorConfig{
				Store: tel.Store(next), Codec: codec.NewRegistry(), Middleware: []aggregate.Middleware{tel.Commands()},
			})
			if err != nil {
				t.Fatal(err)
			}
			cmd := factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 1})
			cmd.AllowCreate = true
			if sig := p.Process(context.Background(), &cmd); !sig.Succeeded() {
				t.Fatalf("%+v", sig)
			}
			if next.appends != tc.appends || next.builts != tc.builts {
				t.Errorf("Append %d, AppendBuilt %d; want %d, %d", next.appends, next.builts, tc.appends, tc.builts)
			}
			m := sample(scrape(t, reg), "factum_store_append_duration_seconds", map[string]string{"backend": "memory", "outcome": "Ok"})
			if got := m.GetHistogram().GetSampleCount(); got != 1 {
				t.Errorf("appends observed %d, want 1", got)
			}
		})
	}
}
