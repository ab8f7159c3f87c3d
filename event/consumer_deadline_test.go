package event_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// Every attempt runs under a deadline between 98.4 % and 100 % of the
// handler timeout away, also late in a batch; a function stuck past it
// sees its context end with DeadlineExceeded and fails; and a context a
// function kept is cancelled once its batch is done.
func TestConsumerHandlerTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	st := eventstore.NewMemory()
	rec := &recorder{}
	var mu sync.Mutex
	var kept []context.Context
	var stuckErr error
	p := event.MustProcessor("shop", "bounded", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error {
			dl, ok := ctx.Deadline()
			left := time.Until(dl)
			mu.Lock()
			kept = append(kept, ctx)
			mu.Unlock()
			if !ok || left > timeout || left < timeout-timeout/64-10*time.Millisecond {
				t.Errorf("stream %s: deadline in %v (set %v), want within [%v, %v]", m.Stream.AggregateID.ID, left, ok, timeout-timeout/64, timeout)
			}
			if m.Stream.AggregateID.ID == "stuck" {
				<-ctx.Done()
				mu.Lock()
				stuckErr = ctx.Err()
				mu.Unlock()
				return ctx.Err()
			}
			// Spend a little of the deadline, so later streams of the
			// batch start with less left on a shared context.
			time.Sleep(2 * time.Millisecond)
			return nil
		}))
	c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), Notify: rec.notify,
		HandlerTimeout: timeout, Attempts: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		appendStream(t, st, "fast-"+string(rune('a'+i%26))+string(rune('a'+i/26)), 1, "item_added")
	}
	appendStream(t, st, "stuck", 1, "item_added")
	start(t, c)
	waitFor(t, "41 signals", func() bool { _, sigs := rec.snapshot(); return len(sigs) == 41 })
	_, sigs := rec.snapshot()
	for _, s := range sigs[:40] {
		if !s.Succeeded() {
			t.Fatalf("fast stream failed: %+v", s)
		}
	}
	if last := sigs[40]; last.Succeeded() {
		t.Fatalf("stuck stream succeeded: %+v", last)
	}
	mu.Lock()
	defer mu.Unlock()
	if !errors.Is(stuckErr, context.DeadlineExceeded) {
		t.Fatalf("stuck function saw %v, want DeadlineExceeded", stuckErr)
	}
	// The batch is over: every context handed out is done.
	waitFor(t, "kept contexts to end", func() bool {
		for _, ctx := range kept {
			if ctx.Err() == nil {
				return false
			}
		}
		return true
	})
}
