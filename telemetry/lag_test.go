package telemetry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

func TestLagIsLogEndMinusCheckpoint(t *testing.T) {
	p := newPipeline(t, nil)
	ctx := context.Background()
	for range 3 {
		if _, err := p.gw.SendAndWait(ctx, factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 1}), command.Wait(factum.StageProcessed)); err != nil {
			t.Fatal(err)
		}
	}
	cps := event.NewMemoryCheckpoints()
	group := factum.Function{Context: "shop", Processor: "summary"}
	now := time.Now().Add(time.Minute)
	lag, err := telemetry.NewLag(telemetry.LagConfig{
		Log: p.store, Checkpoints: cps, Groups: func() []factum.Function { return []factum.Function{group} },
		Limit: 2, Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(lag)
	check := func(streams, seconds float64, minSeconds bool) {
		t.Helper()
		fams := scrape(t, reg)
		s := sample(fams, "factum_consumer_lag_streams", map[string]string{"group": "shop/summary"})
		a := sample(fams, "factum_consumer_lag_seconds", map[string]string{"group": "shop/summary"})
		if s == nil || a == nil || s.GetGauge().GetValue() != streams {
			t.Fatalf("lag streams %v, want %v", s, streams)
		}
		if got := a.GetGauge().GetValue(); (minSeconds && got < seconds) || (!minSeconds && got != seconds) {
			t.Fatalf("lag seconds %v, want %v", got, seconds)
		}
	}
	check(2, 59, true) // 3 behind, counted up to the limit; a minute old
	all, err := p.store.ReadLog(ctx, factum.Position{}, 10)
	if err != nil || len(all) != 3 {
		t.Fatalf("log: %d %v", len(all), err)
	}
	if err := cps.SaveCheckpoint(ctx, group, all[1].Position); err != nil {
		t.Fatal(err)
	}
	check(1, 59, true)
	if err := cps.SaveCheckpoint(ctx, group, all[2].Position); err != nil {
		t.Fatal(err)
	}
	check(0, 0, false) // caught up
	if _, err := telemetry.NewLag(telemetry.LagConfig{}); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Errorf("empty LagConfig: %v", err)
	}
}

func TestBacklogByStatusAndReadErrors(t *testing.T) {
	counts := compensation.Counts{Failed: 3, Prepared: 1, Succeeded: 7, Blocked: 2}
	var fail error
	b, err := telemetry.NewBacklog(func(context.Context) (compensation.Counts, error) { return counts, fail }, 0)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(b)
	fams := scrape(t, reg)
	for status, want := range map[string]float64{"failed": 3, "prepared": 1, "succeeded": 7} {
		if m := sample(fams, "factum_compensation_executions", map[string]string{"status": status}); m == nil || m.GetGauge().GetValue() != want {
			t.Errorf("%s: %v, want %v", status, m, want)
		}
	}
	if m := sample(fams, "factum_compensation_blocked", nil); m == nil || m.GetGauge().GetValue() != 2 {
		t.Errorf("blocked: %v", m)
	}
	fail = errors.New("snapshot store down")
	fams = scrape(t, reg)
	if m := sample(fams, "factum_compensation_read_errors", nil); m == nil || m.GetGauge().GetValue() != 1 {
		t.Errorf("read errors: %v", m)
	}
	if fams["factum_compensation_executions"] != nil {
		t.Error("counts reported although they could not be read")
	}
}

// failingCheckpoints fails to read the checkpoint of the group broken
// names and reads the others' from the memory store it embeds.
type failingCheckpoints struct {
	*event.MemoryCheckpoints
	broken factum.Function
}

func (c failingCheckpoints) Checkpoint(ctx context.Context, g factum.Function) (factum.Position, error) {
	if g == c.broken {
		return factum.Position{}, errors.New("checkpoint table down")
	}
	return c.MemoryCheckpoints.Checkpoint(ctx, g)
}

// A group whose lag cannot be read is reported by its read-errors gauge
// alone, without streams or seconds; the groups that can be read report
// their lag and a read-errors gauge of 0.
func TestLagReadErrorsPerGroup(t *testing.T) {
	p := newPipeline(t, nil)
	if _, err := p.gw.SendAndWait(context.Background(), factum.NewCommand(order.Inventory.ID("sku-1"), order.Restock{Qty: 1}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	ok, broken := factum.Function{Context: "shop", Processor: "summary"}, factum.Function{Context: "shop", Processor: "audit"}
	lag, err := telemetry.NewLag(telemetry.LagConfig{
		Log: p.store, Checkpoints: failingCheckpoints{event.NewMemoryCheckpoints(), broken},
		Groups: func() []factum.Function { return []factum.Function{ok, broken} },
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(lag)
	fams := scrape(t, reg)
	checkMetrics(t, fams, []metricCheck{
		{"factum_consumer_lag_read_errors", map[string]string{"group": "shop/summary"}, 0},
		{"factum_consumer_lag_read_errors", map[string]string{"group": "shop/audit"}, 1},
		{"factum_consumer_lag_streams", map[string]string{"group": "shop/summary"}, 1},
	})
	for _, name := range []string{"factum_consumer_lag_streams", "factum_consumer_lag_seconds"} {
		if m := sample(fams, name, map[string]string{"group": "shop/audit"}); m != nil {
			t.Errorf("%s reported for the group whose lag could not be read: %v", name, m)
		}
	}
}
