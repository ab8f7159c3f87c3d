package aggregate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// Past the Shutdown deadline, one at a time, the commands queued behind
// the one in progress are not processed: they get the closed signal
// (TooManyRequests, not appended) and no handler sees them. The commands
// a lane took into a run behind the one in progress should fare alike,
// rather than being decided, with their handlers run, in an ended
// context.
func TestRunShutdownDropsUnstartedMembers(t *testing.T) {
	for _, maxRun := range []int{1, 0} {
		var block sync.Map
		var decided sync.Map
		blocking := func(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
			return func(ctx context.Context, cmd *factum.Command) factum.Signal {
				if _, ok := block.Load(cmd.ID); ok {
					<-ctx.Done()
				} else {
					decided.Store(cmd.ID, true)
				}
				return next(ctx, cmd)
			}
		}
		w := newWorld(t, newGroupStore(), maxRun, blocking)
		w.run(t, []*factum.Command{tallyCmd("x", openTally{})})
		cmds := []*factum.Command{tallyCmd("x", addTally{Qty: 0}), tallyCmd("x", addTally{Qty: 0}), tallyCmd("x", addTally{Qty: 0})}
		block.Store(cmds[0].ID, true)
		w.hold(t)
		w.send(t, cmds)
		w.gate.release <- struct{}{}
		close(w.gate.release)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_ = w.disp.Shutdown(ctx)
		cancel()
		for i, c := range cmds[1:] {
			sig, _ := w.signal(c.ID)
			_, ran := decided.Load(c.ID)
			if sig.Code != factum.CodeTooManyRequests || ran {
				t.Errorf("MaxRun %d: command %d queued behind the one in progress: %s (%s), passed the middleware: %v; want TooManyRequests, not processed",
					maxRun, i+1, sig.Code, sig.Message, ran)
			}
		}
	}
}
