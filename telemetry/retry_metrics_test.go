package telemetry_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A command no span records (metrics alone, or tracing that reaches no
// command) still has its retry, its cache lookups and its appends counted.
func TestARetryIsCountedWithoutASpan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tracing bool
	}{{"metrics-only", false}, {"continue-only", true}} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			cfg := telemetry.Config{Registerer: reg, ContinueOnly: true}
			if tc.tracing {
				tp, err := telemetry.NewTracerProvider(context.Background(), telemetry.TracingConfig{Exporter: tracetest.NewInMemoryExporter(), Sample: 0})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				cfg.TracerProvider = tp
			}
			tel, err := telemetry.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			restockRetried(t, tel, func() {})
			checkMetrics(t, scrape(t, reg), []metricCheck{
				{"factum_command_retries_total", map[string]string{"aggregate": "shop.inventory"}, 1},
				{"factum_state_cache_lookups_total", map[string]string{"aggregate": "shop.inventory", "result": "hit"}, 1},
				{"factum_state_cache_lookups_total", map[string]string{"aggregate": "shop.inventory", "result": "miss"}, 2},
				{"factum_command_process_duration_seconds", map[string]string{"aggregate": "shop.inventory", "code": "Ok"}, 2},
				{"factum_store_append_duration_seconds", map[string]string{"backend": "memory", "outcome": "Ok"}, 2},
				{"factum_store_append_duration_seconds", map[string]string{"backend": "memory", "outcome": "EventVersionConflict"}, 1},
			})
		})
	}
}

// failingLoad fails the first Load with a transient error.
type failingLoad struct {
	eventstore.Store
	failed atomic.Bool
}

func (f *failingLoad) Load(ctx context.Context, id factum.AggregateID, from, to int) ([]factum.EventStream, error) {
	if f.failed.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("load: %w", syscall.ECONNRESET)
	}
	return f.Store.Load(ctx, id, from, to)
}

// A retry the processor makes after a transient failure to load counts
// as one, although its command appends once.
func TestARetryAfterAFailedLoadIsCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	tel, err := telemetry.New(telemetry.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	p, err := order.Inventory.NewExecutor(aggregate.ExecutorConfig{
		Store: tel.Store(&failingLoad{Store: eventstore.NewMemory()}), Codec: codec.NewRegistry(), Backoff: 1,
		Middleware: []aggregate.Middleware{tel.Commands()},
	})
	if err != nil {
		t.Fatal(err)
	}
	restock(t, p)
	checkMetrics(t, scrape(t, reg), []metricCheck{
		{"factum_command_retries_total", map[string]string{"aggregate": "shop.inventory"}, 1},
		{"factum_state_cache_lookups_total", map[string]string{"aggregate": "shop.inventory", "result": "miss"}, 2},
		{"factum_store_append_duration_seconds", map[string]string{"backend": "memory", "outcome": "Ok"}, 1},
	})
}
