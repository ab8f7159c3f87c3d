package aggregate_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
)

// cancelling runs addTally{Qty: 2} in a context that has ended, as a
// per-command deadline that passed while the command waited its turn.
func cancelling(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
	return func(ctx context.Context, cmd *factum.Command) factum.Signal {
		if b, ok := cmd.Body.(addTally); ok && b.Qty == 2 {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			return next(cctx, cmd)
		}
		return next(ctx, cmd)
	}
}

// A command whose context has ended before its append is not appended
// one at a time (the store refuses a dead context); in a run it must not
// be either, whatever the contexts of the commands grouped with it.
func TestRunEndedContextIsNotAppended(t *testing.T) {
	tw := newTwins(t, cancelling)
	tw.run(t, []*factum.Command{tallyCmd("c", openTally{})})
	cmds := []*factum.Command{tallyCmd("c", addTally{Qty: 1}), tallyCmd("c", addTally{Qty: 2}), tallyCmd("c", addTally{Qty: 1})}
	tw.run(t, cmds)
	tw.same(t, "c", cmds)
}

// cacheCounts counts each command's cache observations.
type cacheCounts struct {
	mu sync.Mutex
	n  map[string]int
}

type cacheCount struct {
	c  *cacheCounts
	id string
}

func (o cacheCount) ObserveCache(bool) {
	o.c.mu.Lock()
	o.c.n[o.id]++
	o.c.mu.Unlock()
}

func (c *cacheCounts) middleware(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
	return func(ctx context.Context, cmd *factum.Command) factum.Signal {
		return next(aggregate.WithCacheObserver(ctx, cacheCount{c: c, id: cmd.ID}), cmd)
	}
}

// A CacheObserver learns of one cache lookup per attempt (cachetrace.go);
// a command of a run that does not fit the group (it binds an effect) is
// looked up twice in its one attempt.
func TestRunOneCacheLookupPerAttempt(t *testing.T) {
	cc := &cacheCounts{n: map[string]int{}}
	w := newWorld(t, newGroupStore(), 0, cc.middleware)
	t.Cleanup(func() { w.shutdown(t) })
	w.run(t, []*factum.Command{tallyCmd("o", openTally{})})
	cmds := []*factum.Command{tallyCmd("o", addTally{Qty: 1}), tallyCmd("o", claimTally{Key: "k"})}
	w.run(t, cmds)
	for i, c := range cmds {
		if sig, _ := w.signal(c.ID); sig.Code != factum.CodeOk {
			t.Fatalf("command %d: %s %s", i, sig.Code, sig.Message)
		}
		cc.mu.Lock()
		n := cc.n[c.ID]
		cc.mu.Unlock()
		if n != 1 {
			t.Errorf("command %d (%s): %d cache lookups observed in its one attempt, want 1", i, c.Name, n)
		}
	}
}

// orderSink records the versions of each aggregate's signals in the order
// the sink receives them.
type orderSink struct {
	mu       sync.Mutex
	versions []int
	n        int
}

func (s *orderSink) Signal(sig factum.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.versions = append(s.versions, sig.AggregateVersion)
	s.n++
}

// One at a time, a lane hands an aggregate's signals to the sink in
// the commands' order; does a run?
func TestRunSignalsInOrder(t *testing.T) {
	p := tallyExecutor(t, aggregate.ExecutorConfig{Store: eventstore.NewMemory()})
	sink := &orderSink{}
	gate := &gated{next: p, started: make(chan struct{}, 1), release: make(chan struct{})}
	d, err := command.NewDispatcher(gate, sink, command.DispatcherConfig{Lanes: 1})
	if err != nil {
		t.Fatal(err)
	}
	d.Start(context.Background())
	t.Cleanup(func() { close(gate.release); _ = d.Shutdown(context.Background()) })
	send := func(c *factum.Command) {
		if err := d.Send(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	barrier := func() {
		c := factum.NewCommand(barrierType.WithID("b").WithTenant(factum.DefaultTenant), struct{}{})
		send(&c)
		<-gate.started
	}
	send(tallyCmd("s", openTally{}))
	for round := range 50 {
		barrier()
		for range 8 {
			send(tallyCmd("s", takeTally{Qty: 0}))
		}
		gate.release <- struct{}{}
		for !d.Idle() {
			time.Sleep(100 * time.Microsecond)
		}
		sink.mu.Lock()
		var vs []int
		for _, v := range sink.versions {
			if v > 0 {
				vs = append(vs, v)
			}
		}
		sink.mu.Unlock()
		if !slices.IsSorted(vs) {
			t.Fatalf("round %d: the sink got the aggregate's versions in the order %v", round, vs[max(0, len(vs)-12):])
		}
	}
}
