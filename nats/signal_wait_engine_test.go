package nats_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/nats"
)

// teeSink records every signal delivered at an instance before handing
// it on to the waiters.
type teeSink struct {
	next command.Sink
	mu   *sync.Mutex
	got  *[]factum.Signal
}

func (s teeSink) Signal(sig factum.Signal) {
	s.mu.Lock()
	*s.got = append(*s.got, sig)
	s.mu.Unlock()
	s.next.Signal(sig)
}

// waitingInstance is an instance with the order summaries' projection
// (PROJECTED), its wait signals over NATS, and a record of the signals
// delivered to its waiters.
func waitingInstance(t *testing.T, st engine.Storage, url, prefix, name string) (*engine.Engine, *nats.Signals, func() []factum.Signal) {
	t.Helper()
	var mu sync.Mutex
	var got []factum.Signal
	rt, sig := instance(t, st, url, prefix, name, instanceOptions{
		summaries: true,
		tee:       func(local command.Sink) command.Sink { return teeSink{next: local, mu: &mu, got: &got} },
	})
	return rt, sig, func() []factum.Signal {
		mu.Lock()
		defer mu.Unlock()
		return append([]factum.Signal(nil), got...)
	}
}

// With the consumers leased at a, a wait at b for PROCESSED makes a send
// b none of the command's branch-stage signals (it counts them as
// unwaited), while waits at b for SAGA_HANDLED and PROJECTED still
// complete over NATS. A saga's command carries the wait of the saga's own
// send (PROCESSED, at a), not the one of the command whose stream it
// handled (SAGA_HANDLED, at b).
func TestAWaitForProcessedGetsNoBranchSignals(t *testing.T) {
	url := startNATS(t)
	for backend, st := range storages(t) {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			prefix := "t" + factum.NewID()[24:] + ".signal"
			run := factum.NewID()[24:]
			a, sigA, _ := waitingInstance(t, st, url, prefix, "a"+run)
			sku := "sku-" + run
			takeLeases(t, a, sku, 100, "o-first-"+run)
			b, _, deliveredAtB := waitingInstance(t, st, url, prefix, "b"+run)
			before := sigA.Stats()

			processed := factum.NewCommand(order.Orders.ID("o-processed-"+run), order.PlaceOrder{SKU: sku, Qty: 1})
			if r, err := b.Gateway().SendAndWait(ctx, processed, command.Wait(factum.StageProcessed)); err != nil || r.Stage != factum.StageProcessed {
				t.Fatalf("wait for PROCESSED at b: %+v, %v", r, err)
			}
			// Waits for later streams: a's consumers handle streams in
			// the log's order, so once these complete, the first one's
			// branch signals were emitted.
			sagaOrder := order.Orders.ID("o-saga-" + run)
			for _, stage := range []factum.CommandStage{factum.StageSagaHandled, factum.StageProjected} {
				id := sagaOrder
				if stage == factum.StageProjected {
					id = order.Orders.ID("o-projected-" + run)
				}
				r, err := b.Gateway().SendAndWait(ctx, factum.NewCommand(id, order.PlaceOrder{SKU: sku, Qty: 1}), command.Wait(stage).Within(5*time.Second))
				if err != nil || r.Stage != stage || !r.Succeeded() {
					t.Fatalf("wait for %s at b: %+v, %v", stage, r, err)
				}
			}
			for _, s := range deliveredAtB() {
				if s.CommandID == processed.ID && s.Stage.IsBranch() {
					t.Errorf("b got the %s signal of a command it waited for at PROCESSED: %+v", s.Stage, s)
				}
			}
			// The snapshotter, the projection and the saga each had one.
			if n := sigA.Stats().Unwaited - before.Unwaited; n < 3 {
				t.Errorf("a counted %d unwaited signals, want at least 3", n)
			}

			// The saga's command to the order (ConfirmOrder, version 2) was
			// sent at a, waiting for PROCESSED.
			var confirm []factum.EventStream
			deadline := time.Now().Add(10 * time.Second)
			for len(confirm) == 0 && time.Now().Before(deadline) {
				var err error
				if confirm, err = a.Store().Load(ctx, sagaOrder, 2, eventstore.MaxVersion); err != nil {
					t.Fatal(err)
				}
				if len(confirm) == 0 {
					time.Sleep(20 * time.Millisecond)
				}
			}
			if len(confirm) == 0 {
				t.Fatal("the saga's ConfirmOrder was not appended")
			}
			if h := confirm[0].Header; h[factum.OriginHeader] != "a"+run || h[factum.OriginWaitHeader] != "PROCESSED" {
				t.Errorf("the saga's command's stream has the header %v, want origin a%s waiting for PROCESSED", h, run)
			}
		})
	}
}
