package event_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoretest"
)

// A drained consumer ends on a read that shows every stream appended
// before its drain: the page of another group's read in flight at its
// position, begun before the append, does not answer it, whether the drain
// came before the consumer's run or while its own read waited for that
// read.
func TestDrainSeesAStreamAppendedDuringAnotherGroupsRead(t *testing.T) {
	for _, during := range []bool{false, true} {
		name := "drained before its run"
		if during {
			name = "drained while its read waits"
		}
		t.Run(name, func(t *testing.T) {
			held := eventstoretest.HoldFirstRead(eventstore.NewMemory().Backend())
			t.Cleanup(held.Release)
			log, err := eventstore.New(held, eventstore.Config{TailStreams: 16, PollInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			go func() { _, _ = log.ReadLog(eventstore.Following(context.Background()), factum.Position{}, 10) }()
			<-held.Entered() // another group's read found the log empty and is held

			var handled atomic.Int64
			p := event.MustProcessor("shop", "drained", factum.StageProjected,
				event.On(func(ctx context.Context, m event.Message, e ItemAdded) error { handled.Add(1); return nil }))
			c, err := event.NewConsumer(p, event.Config{Log: log, Checkpoints: event.NewMemoryCheckpoints(), PollInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			appendAndDrain := func() {
				appendStream(t, log, "a", 1, "item_added")
				c.Drain()
			}
			if during {
				held.Run(t, func() error { return c.Run(context.Background()) }, appendAndDrain)
			} else {
				appendAndDrain()
				held.Run(t, func() error { return c.Run(context.Background()) }, nil)
			}
			if n := handled.Load(); n != 1 {
				t.Fatalf("the drained consumer handled %d streams, want the one appended before its drain", n)
			}
		})
	}
}
