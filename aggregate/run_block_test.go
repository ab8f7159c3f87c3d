package aggregate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// A middleware holding one command at a time (a lock around next) and
// one bounding commands to two: a run through it still ends, each command
// getting what one at a time gets.
func TestRunThroughBlockingMiddleware(t *testing.T) {
	var mu sync.Mutex
	locking := func(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			mu.Lock()
			defer mu.Unlock()
			return next(ctx, cmd)
		}
	}
	for name, mw := range map[string]aggregate.Middleware{"lock": locking, "bound": atMost(2), "retry": aggregate.Retry(aggregate.RetryConfig{}), "recover": aggregate.Recover()} {
		t.Run(name, func(t *testing.T) {
			store := newGroupStore()
			store.fault = func(n int) groupFault {
				return []groupFault{groupAppends, groupRefused, groupLost, groupCommittedUnknown}[n%4]
			}
			w := newWorld(t, store, 0, mw)
			t.Cleanup(func() { w.shutdown(t) })
			w.run(t, []*factum.Command{tallyCmd("m", openTally{})})
			cmds := addTallies("m", 20, 0)
			done := make(chan struct{})
			go func() { w.run(t, cmds); close(done) }()
			select {
			case <-done:
			case <-time.After(60 * time.Second): // a deadlock, not a timing
				t.Fatal("the run did not end")
			}
			for i, c := range cmds {
				if sig, n := w.signal(c.ID); n != 1 || sig.Code != factum.CodeOk || sig.AggregateVersion != i+2 {
					t.Fatalf("command %d: %d signals, %s v%d (%s)", i, n, sig.Code, sig.AggregateVersion, sig.Message)
				}
			}
		})
	}
}

// A Shutdown deadline passing mid-run, while one of its commands waits on
// its context: Shutdown returns, every command gets one signal, and no
// command is stored after one before it that was not.
func TestRunShutdownDeadlineMidRun(t *testing.T) {
	var block sync.Map // command ID -> true: waits for its context to end
	blocking := func(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			if _, ok := block.Load(cmd.ID); ok {
				<-ctx.Done()
			}
			return next(ctx, cmd)
		}
	}
	store := newGroupStore()
	w := newWorld(t, store, 0, blocking)
	w.run(t, []*factum.Command{tallyCmd("d", openTally{})})
	cmds := addTallies("d", 12, 0)
	block.Store(cmds[5].ID, true)
	w.hold(t)
	w.send(t, cmds)
	w.gate.release <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	close(w.gate.release)
	done := make(chan error, 1)
	go func() { done <- w.disp.Shutdown(ctx) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second): // a deadlock, not a timing
		t.Fatal("Shutdown did not return")
	}
	stored := len(w.streams(t, tallyID("d"))) - 1
	for i, c := range cmds {
		sig, n := w.signal(c.ID)
		if n != 1 {
			t.Fatalf("command %d: %d signals", i, n)
		}
		if ok := sig.Code == factum.CodeOk; ok != (i < stored) {
			t.Errorf("command %d: %s v%d (%s), with %d of the run stored", i, sig.Code, sig.AggregateVersion, sig.Message, stored)
		}
	}
}
