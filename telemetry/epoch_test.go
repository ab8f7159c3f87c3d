package telemetry_test

import (
	"testing"
	"time"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

// A command observed by one Telemetry whose store another Telemetry
// decorates measures its processing on its own clock: the other's clock
// has another epoch, so its append's end is no end of this latency.
func TestAStoreOfAnotherTelemetryDoesNotEndTheCommandsLatency(t *testing.T) {
	reg := prometheus.NewRegistry()
	commands, err := telemetry.New(telemetry.Config{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	// The store's Telemetry is made later: its clock reads less than the
	// commands' by this much at any instant.
	time.Sleep(200 * time.Millisecond)
	stores, err := telemetry.New(telemetry.Config{Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := order.Inventory.NewExecutor(aggregate.ExecutorConfig{
		Store: stores.Store(eventstore.NewMemory()), Codec: codec.NewRegistry(), Middleware: []aggregate.Middleware{commands.Commands()},
	})
	if err != nil {
		t.Fatal(err)
	}
	restock(t, p)
	m := sample(scrape(t, reg), "factum_command_process_duration_seconds", map[string]string{"aggregate": "shop.inventory", "code": "Ok"})
	if h := m.GetHistogram(); h.GetSampleCount() != 1 || h.GetSampleSum() < 0 {
		t.Errorf("process latency: %d samples, sum %vs; want 1 sample, not negative", h.GetSampleCount(), h.GetSampleSum())
	}
}
