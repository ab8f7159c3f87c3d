package aggregate_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
)

// inner holds the signal each attempt under abandoning ended with, by
// command ID.
var inner sync.Map

// slowDecide is an observer that holds every decide phase for a moment,
// as a slow handler does.
type slowDecide struct{}

func (slowDecide) ObserveCache(bool) {}

func (slowDecide) StartPhase(ctx context.Context, ph aggregate.Phase) context.Context {
	if ph == aggregate.PhaseDecide {
		time.Sleep(2 * time.Millisecond)
	}
	return ctx
}

func (slowDecide) EndPhase(context.Context, aggregate.Phase, error) {}

// abandoning is a timeout middleware of the common shape: it runs the
// rest of the chain in a goroutine and answers RequestTimeout when the
// deadline passes first, leaving the attempt to finish on its own (the
// executor stays correct under concurrent calls for one aggregate).
func abandoning(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
	return func(ctx context.Context, cmd *factum.Command) factum.Signal {
		ch := make(chan factum.Signal, 1)
		go func() {
			sig := next(aggregate.WithCacheObserver(ctx, slowDecide{}), cmd)
			inner.Store(cmd.ID, sig)
			ch <- sig
		}()
		select {
		case sig := <-ch:
			return sig
		case <-time.After(time.Millisecond):
			return factum.Signal{CommandID: cmd.ID, RequestID: cmd.RequestIDOrID(), Stage: factum.StageProcessed,
				AggregateID: cmd.AggregateID, Code: factum.CodeRequestTimeout, Message: "timed out", SignalTime: time.Now()}
		}
	}
}

// A run through a middleware that abandons attempts still running: the
// abandoned attempts finish on their own, and what is stored is a
// history one command at a time could have made: each command stored at
// most once, versions gapless, each stream built on the state before it.
func TestRunAbandonedAttempts(t *testing.T) {
	for _, maxRun := range []int{1, 0} {
		t.Run(fmt.Sprintf("maxRun=%d", maxRun), func(t *testing.T) { testAbandoned(t, maxRun) })
	}
}

func testAbandoned(t *testing.T, maxRun int) {
	for round := range 20 {
		store := newGroupStore()
		w := newWorld(t, store, maxRun, abandoning)
		w.run(t, []*factum.Command{tallyCmd("a", openTally{})})
		cmds := addTallies("a", 10, 1)
		w.run(t, cmds)
		// The abandoned attempts end on their own: wait until the store
		// holds still.
		prev := -1
		for {
			time.Sleep(50 * time.Millisecond)
			n := len(w.streams(t, tallyID("a")))
			if n == prev {
				break
			}
			prev = n
		}
		ss, err := store.Load(context.Background(), tallyID("a"), 1, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		sum := 0
		for i, s := range ss {
			if s.Version != i+1 {
				t.Fatalf("round %d: stream %d has version %d", round, i, s.Version)
			}
			if seen[s.RequestID] {
				t.Fatalf("round %d: request %s stored twice", round, s.RequestID)
			}
			seen[s.RequestID] = true
			if i > 0 {
				sum++
			}
		}
		if sum > 10 {
			t.Fatalf("round %d: %d adds stored", round, sum)
		}
		for i, c := range cmds {
			v, ok := inner.Load(c.ID)
			if !ok {
				continue
			}
			sig := v.(factum.Signal)
			if sig.Code != factum.CodeOk {
				continue
			}
			if sig.AggregateVersion < 1 || sig.AggregateVersion > len(ss) || ss[sig.AggregateVersion-1].CommandID != c.ID {
				t.Fatalf("round %d: command %d answered Ok v%d, which the store does not hold as its stream", round, i, sig.AggregateVersion)
			}
		}
		w.shutdown(t)
	}
}
