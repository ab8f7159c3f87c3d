package event_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// A function's signal names the origin of the stream's command and the
// stage the wait there is for, from the stream's header: routing, for a
// transport to send it there, or not at all when the wait cannot use it.
// A stream whose header names no wait, or no stage, gives a signal of
// wait 0 (every signal travels).
func TestConsumerSignalsNameTheOriginAndItsWait(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header map[string]string
		origin string
		wait   factum.CommandStage
	}{
		{"origin and wait", map[string]string{factum.OriginHeader: "web-2", factum.OriginWaitHeader: "PROCESSED"}, "web-2", factum.StageProcessed},
		{"origin only", map[string]string{factum.OriginHeader: "web-2"}, "web-2", 0},
		{"no stage", map[string]string{factum.OriginHeader: "web-2", factum.OriginWaitHeader: "processed?"}, "web-2", 0},
		{"none", nil, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := eventstore.NewMemory()
			rec := &recorder{}
			p := event.MustProcessor("shop", "cart_summary", factum.StageProjected,
				event.On(func(context.Context, event.Message, ItemAdded) error { return nil }))
			c, err := event.NewConsumer(p, event.Config{
				Log: st, Checkpoints: event.NewMemoryCheckpoints(), Notify: rec.notify, PollInterval: 10 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			start(t, c)
			s := &factum.EventStream{
				ID: factum.NewID(), AggregateID: carts.WithID("a"), Version: 1, Header: tc.header,
				CommandID: factum.NewID(), RequestID: factum.NewID(), CreateTime: time.Now(),
				Events: []factum.DomainEvent{{ID: factum.NewID(), Name: "item_added", Sequence: 1, IsLast: true, Body: []byte(`{"sku":"x"}`)}},
			}
			if err := st.Append(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the signal", func() bool { _, sigs := rec.snapshot(); return len(sigs) == 1 })
			_, sigs := rec.snapshot()
			if got := sigs[0]; got.CommandID != s.CommandID || got.Origin != tc.origin || got.OriginWait != tc.wait {
				t.Fatalf("signal %+v, want origin %q and wait %v", got, tc.origin, tc.wait)
			}
		})
	}
}
