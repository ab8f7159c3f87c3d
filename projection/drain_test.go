package projection_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/eventstore/eventstoretest"
	"github.com/factum-go/factum/projection"
)

// A drained runner ends on reads that show every stream appended before
// its drain: the page of another reader's read in flight at its position,
// begun before the append, does not answer them, whether the drain came
// before the runner's run or while its own read waited for that read.
func TestDrainSeesAStreamAppendedDuringAnotherReadersRead(t *testing.T) {
	for _, during := range []bool{false, true} {
		name := "drained before its run"
		if during {
			name = "drained while its read waits"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			_, ps := openSQLite(t)
			held := eventstoretest.HoldFirstRead(eventstore.NewMemory().Backend())
			t.Cleanup(held.Release)
			log, err := eventstore.New(held, eventstore.Config{TailStreams: 16, PollInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			go func() { _, _ = log.ReadLog(eventstore.Following(ctx), factum.Position{}, 10) }()
			<-held.Entered() // another reader's read found the log empty and is held

			var projected atomic.Int64
			p, err := projection.New("shop", "drained",
				func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error { projected.Add(1); return nil },
				projection.From(carts))
			if err != nil {
				t.Fatal(err)
			}
			r, err := projection.NewRunner(p, projection.Config{Log: log, Store: ps, PollInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			appendAndDrain := func() {
				appendItemAdded(ctx, log, carts.WithID("a"), 1)
				r.Drain()
			}
			if during {
				held.Run(t, func() error { return r.Run(ctx) }, appendAndDrain)
			} else {
				appendAndDrain()
				held.Run(t, func() error { return r.Run(ctx) }, nil)
			}
			if n := projected.Load(); n != 1 {
				t.Fatalf("the drained runner projected %d streams, want the one appended before its drain", n)
			}
		})
	}
}
