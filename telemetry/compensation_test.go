package telemetry_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/internal/compensationtest"
	"github.com/factum-go/factum/telemetry"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Each retry of a compensation execution is a span with its outcome:
// an operator's forced retry that fails again is marked with the
// function's error, a scheduler's that succeeds is not; the prepare and
// the outcome's recording are commands under it, and so is the retried
// function's own span (the retry runs through the EventMiddleware). The
// attempts are counted by function and outcome, and the retried
// function's runs with the functions' latency.
func TestCompensationAttemptsAreSpans(t *testing.T) {
	ctx := context.Background()
	clk := &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	exp := tracetest.NewInMemoryExporter()
	tp, err := telemetry.NewTracerProvider(ctx, telemetry.TracingConfig{Exporter: exp, Sample: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })
	reg := prometheus.NewRegistry()
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	counter := event.MustProcessor("shop", "order_counter", factum.StageProjected,
		event.On(func(context.Context, event.Message, order.OrderPlaced) error {
			if calls.Add(1) <= 2 {
				return errors.New("warehouse offline")
			}
			return nil
		}))
	rt, comp := compensationtest.Start(t, compensation.Config{Context: "shop", Now: clk.Now, Attempts: tel.Compensation()}, engine.Config{
		Store:             tel.Store(eventstore.NewMemory()),
		Processors:        []*event.Processor{counter},
		Events:            event.Config{Attempts: 1, Now: clk.Now},
		CommandMiddleware: []aggregate.Middleware{tel.Commands()},
		EventMiddleware:   []event.Middleware{tel.Events()},
		Bus:               engine.SendWrapper(engine.DispatcherBus(command.DispatcherConfig{}), tel.Bus),
	}, order.Orders, order.Inventory)
	cmd := factum.NewCommand(order.Orders.ID("o-1"), order.PlaceOrder{SKU: "sku-1", Qty: 1})
	if _, err := rt.Gateway().SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	svc := comp.Service()
	item := waitList(t, svc, compensation.StatusFailed, 1)
	exp.Reset()
	forced, err := svc.ForceRetry(ctx, item.ID.ID)
	if err != nil || forced.Outcome != compensation.OutcomeFailed {
		t.Fatalf("forced retry: %+v %v", forced, err)
	}
	// The scheduler finds due executions in the snapshots, which follow
	// the forced retry's outcome a moment later.
	waitList(t, svc, compensation.StatusFailed, forced.Version)
	clk.Advance(time.Hour)
	if rep, err := comp.NewScheduler(compensation.SchedulerConfig{}).RunOnce(ctx); err != nil || rep.Succeeded != 1 {
		t.Fatalf("pass: %+v %v", rep, err)
	}
	var attempts []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == "factum.compensate shop/order_counter/on_order_placed" {
			attempts = append(attempts, s)
		}
	}
	if len(attempts) != 2 {
		t.Fatalf("%d attempt spans, want 2: %v", len(attempts), names2(exp.GetSpans()))
	}
	for i, want := range []struct {
		outcome string
		forced  bool
		failed  bool
	}{{"FAILED", true, true}, {"SUCCEEDED", false, false}} {
		s := attempts[i]
		if v, _ := attr(s, telemetry.AttrOutcome); v.AsString() != want.outcome {
			t.Errorf("attempt %d outcome %q, want %q", i+1, v.AsString(), want.outcome)
		}
		if v, _ := attr(s, telemetry.AttrForced); v.AsBool() != want.forced {
			t.Errorf("attempt %d forced %v", i+1, v.AsBool())
		}
		if v, _ := attr(s, telemetry.AttrAttempt); v.AsInt64() != int64(i+1) {
			t.Errorf("attempt %d numbered %d", i+1, v.AsInt64())
		}
		if v, _ := attr(s, telemetry.AttrExecutionID); v.AsString() != item.ID.ID {
			t.Errorf("attempt %d execution %q, want %q", i+1, v.AsString(), item.ID.ID)
		}
		if failed := s.Status.Code == codes.Error; failed != want.failed || failed && !strings.Contains(s.Status.Description, "warehouse offline") {
			t.Errorf("attempt %d status %+v", i+1, s.Status)
		}
		// The prepare and the outcome's recording are its children.
		children := 0
		for _, c := range exp.GetSpans() {
			if c.Parent.SpanID() == s.SpanContext.SpanID() && strings.HasPrefix(c.Name, "factum.process shop.execution_failed") {
				children++
			}
		}
		if children != 2 {
			t.Errorf("attempt %d has %d command spans under it, want 2 (prepare, outcome): %v", i+1, children, names2(exp.GetSpans()))
		}
		// The retried function runs through the event middleware: its
		// span is under the attempt's, with the retry's outcome.
		var fns []tracetest.SpanStub
		for _, c := range exp.GetSpans() {
			if c.Parent.SpanID() == s.SpanContext.SpanID() && c.Name == "factum.function shop/order_counter/on_order_placed" {
				fns = append(fns, c)
			}
		}
		if len(fns) != 1 || (fns[0].Status.Code == codes.Error) != want.failed {
			t.Errorf("attempt %d has function spans %v under it, want one, failed %v: %v", i+1, fns, want.failed, names2(exp.GetSpans()))
		}
	}
	// The live delivery and the two retries.
	if got := counted(t, reg, "factum_function_failures_total", map[string]string{"function": "shop/order_counter/on_order_placed", "stage": "PROJECTED"}); got != 2 {
		t.Errorf("function failures = %v, want 2 (the delivery, the forced retry)", got)
	}
	for outcome, want := range map[string]float64{"FAILED": 1, "SUCCEEDED": 1} {
		got := counted(t, reg, "factum_compensation_attempts_total", map[string]string{"function": "shop/order_counter/on_order_placed", "outcome": outcome})
		if got != want {
			t.Errorf("attempts %s = %v, want %v", outcome, got, want)
		}
	}
}

// waitList waits for the operators' list to show one execution in status
// at version or later.
func waitList(t *testing.T, svc *compensation.Service, status compensation.Status, version int) compensation.Item {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		items, err := svc.List(context.Background(), compensation.Filter{Status: []compensation.Status{status}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 1 && items[0].Version >= version {
			return items[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no execution %s at version %d: %+v", status, version, items)
		}
	}
}
