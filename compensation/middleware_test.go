package compensation_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/compensation"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// deliveries records each delivery an event middleware sees: the
// function, the stream's aggregate ID and whether it failed.
type deliveries struct {
	mu  sync.Mutex
	log []string
}

func (d *deliveries) middleware(h *event.Handler, next event.StreamFunc) event.StreamFunc {
	return func(ctx context.Context, s *factum.EventStream) error {
		err := next(ctx, s)
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		d.mu.Lock()
		d.log = append(d.log, h.Function.Name+" "+s.AggregateID.ID+" "+outcome)
		d.mu.Unlock()
		return err
	}
}

// of returns the deliveries of the totals function's streams of order id.
func (d *deliveries) of(id string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, l := range d.log {
		if strings.HasPrefix(l, totalsFn.Name+" "+id+" ") {
			out = append(out, l)
		}
	}
	return out
}

// TestRetryRunsThroughTheEventMiddleware: a compensation's retry of a
// failed function passes through the runtime's EventMiddleware (where
// telemetry traces and counts deliveries), as the live delivery did, once
// per retry, with the retry's outcome.
func TestRetryRunsThroughTheEventMiddleware(t *testing.T) {
	proj := newTotals()
	proj.setFail(func(order string, call int) error {
		if call == 1 {
			return errBoom
		}
		return nil
	})
	var d deliveries
	f := newFixture(t, eventstore.NewMemory(), options{totals: proj, eventMiddleware: []event.Middleware{d.middleware}})
	ev := f.place("o-1", 3)
	f.execution(ev, nil)
	f.clock.Advance(compensation.DefaultMinBackoff)
	f.runOnce(f.sched, 1, 1, 0)
	want := []string{totalsFn.Name + " o-1 error", totalsFn.Name + " o-1 ok"}
	if got := d.of("o-1"); !slices.Equal(got, want) {
		t.Fatalf("the middleware saw %v, want %v", got, want)
	}
}
