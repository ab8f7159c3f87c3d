package event_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// What a function adds with AddResult reaches its own signal only: not the
// signal of the next function on the stream, not its own on later streams,
// and not after a failure.
func TestAddResultStaysWithItsSignal(t *testing.T) {
	st := eventstore.NewMemory()
	rec := &recorder{}
	p := event.MustProcessor("shop", "results", factum.StageEventHandled,
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error {
			event.AddResult(ctx, "sku", e.SKU)
			if e.SKU == "c-2-0" {
				return factum.IllegalState("no") // fails, not retried, after adding
			}
			return nil
		}, event.Named("adds")),
		event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { return nil }, event.Named("adds_nothing")),
	)
	c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), Notify: rec.notify, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	start(t, c)
	appendStream(t, st, "c", 1, "item_added")
	appendStream(t, st, "c", 2, "item_added")
	appendStream(t, st, "c", 3, "item_added")
	waitFor(t, "six signals", func() bool { _, sigs := rec.snapshot(); return len(sigs) == 6 })
	_, sigs := rec.snapshot()
	for _, s := range sigs {
		switch {
		case s.Function.Name == "adds_nothing" && s.Results != nil:
			t.Errorf("version %d: adds_nothing's signal carries %v", s.AggregateVersion, s.Results)
		case s.Function.Name == "adds" && s.AggregateVersion == 2:
			if s.Code == factum.CodeOk {
				t.Errorf("version 2: adds succeeded, want its rejection")
			}
		case s.Function.Name == "adds":
			want := "c-" + string(rune('0'+s.AggregateVersion)) + "-0"
			if len(s.Results) != 1 || s.Results["sku"] != want {
				t.Errorf("version %d: adds's signal carries %v, want sku=%s", s.AggregateVersion, s.Results, want)
			}
		}
	}
}
