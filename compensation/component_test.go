package compensation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/memory"
)

// Compensation as one entry of engine.Config: the failure is recorded in
// the engine's context and snapshot store, the scheduler the engine runs
// retries it, and Shutdown stops the scheduler.
func TestCompensationIsOneComponent(t *testing.T) {
	ctx := t.Context()
	p := newTotals()
	p.setFail(func(_ string, call int) error {
		if call == 1 {
			return errors.New("projection down")
		}
		return nil
	})
	comp := compensation.NewComponent(
		compensation.Config{RetrySpec: compensation.RetrySpec{MinBackoff: time.Millisecond, MaxRetries: 5}},
		compensation.SchedulerConfig{Period: 10 * time.Millisecond})
	if comp.Service() != nil {
		t.Fatal("Service before engine.New is not nil")
	}
	eng, err := engine.New(engine.Config{
		Storage:    memory.New(),
		Processors: []*event.Processor{p.processor()},
		Components: []engine.Component{comp},
		Events:     event.Config{Attempts: 1, Backoff: time.Millisecond, PollInterval: 10 * time.Millisecond},
	}, orders)
	if err != nil {
		t.Fatal(err)
	}
	if got := comp.Compensation().Named(); got.Context != "shop" {
		t.Fatalf("the compensation's context is %q, want the engine's", got.Context)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(orders.ID("o1"), PlaceOrder{SKU: "a", Qty: 2}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	svc := comp.Service()
	deadline := time.Now().Add(20 * time.Second)
	for {
		qty, applied, calls := p.get("o1")
		n, _ := svc.Counts(ctx)
		if qty == 2 && applied == 1 && calls >= 2 && n.Succeeded == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not retried: qty %d applied %d calls %d, executions %+v", qty, applied, calls, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := eng.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown (the scheduler must stop within it): %v", err)
	}
	// The execution lives in the engine's own event store.
	events := eng.Store()
	streams, err := events.Load(ctx, comp.Compensation().Named().WithID(compensation.ExecutionID(totalsFn, firstEventID(t, events, orders.ID("o1")))), 1, eventstore.MaxVersion)
	if err != nil || len(streams) < 2 {
		t.Fatalf("the execution's history: %d streams, %v; want recorded, prepared, succeeded", len(streams), err)
	}
}

func firstEventID(t *testing.T, es eventstore.Store, id factum.AggregateID) string {
	t.Helper()
	streams, err := es.Load(t.Context(), id, 1, 1)
	if err != nil || len(streams) != 1 {
		t.Fatalf("load %s: %v", id, err)
	}
	return streams[0].Events[0].ID
}

// Without a snapshot store that answers queries the component fails
// engine.New.
func TestTheComponentNeedsQueryableSnapshots(t *testing.T) {
	comp := compensation.NewComponent(compensation.Config{}, compensation.SchedulerConfig{})
	_, err := engine.New(engine.Config{Store: eventstore.NewMemory(), Components: []engine.Component{comp}}, orders)
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("New = %v, want IllegalArgument", err)
	}
}
