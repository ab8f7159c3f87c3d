package aggregate_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/eventstore"
)

func tallyID(id string) factum.AggregateID {
	return factum.NamedAggregate{Context: "runs", Aggregate: "tally"}.WithID(id).WithTenant(factum.DefaultTenant)
}

func tallyCmd(id string, body any) *factum.Command {
	c := factum.NewCommand(tallyID(id), body)
	c.IsCreate = c.Name == factum.NameOf(openTally{})
	return &c
}

// addTallies returns n commands adding qty to the tally id.
func addTallies(id string, n, qty int) []*factum.Command {
	cmds := make([]*factum.Command, n)
	for i := range cmds {
		cmds[i] = tallyCmd(id, addTally{Qty: qty})
	}
	return cmds
}

// twins are two worlds under the same middleware: runs hands the executor
// runs, one hands it one command at a time, so that a run's outcomes can
// be checked against the ones it must equal.
type twins struct{ runs, one *world }

// newTwins starts twins, shut down at the test's end.
func newTwins(t *testing.T, mw ...aggregate.Middleware) twins {
	t.Helper()
	tw := twins{runs: newWorld(t, newGroupStore(), 0, mw...), one: newWorld(t, newGroupStore(), 1, mw...)}
	t.Cleanup(func() { tw.runs.shutdown(t); tw.one.shutdown(t) })
	return tw
}

// run runs copies of cmds in both worlds.
func (tw twins) run(t tb, cmds []*factum.Command) {
	t.Helper()
	tw.runs.run(t, clones(cmds))
	tw.one.run(t, clones(cmds))
}

// same checks that each of cmds got one signal with runs, of the code and
// version it got one at a time, and that the tally id holds as many
// streams in both worlds.
func (tw twins) same(t *testing.T, id string, cmds []*factum.Command) {
	t.Helper()
	for i, c := range cmds {
		got, n := tw.runs.signal(c.ID)
		want, _ := tw.one.signal(c.ID)
		if n != 1 || got.Code != want.Code || got.AggregateVersion != want.AggregateVersion {
			t.Errorf("command %d: with runs %d signals, %s v%d (%s); one at a time %s v%d (%s)",
				i, n, got.Code, got.AggregateVersion, got.Message, want.Code, want.AggregateVersion, want.Message)
		}
	}
	if got, want := len(tw.runs.streams(t, tallyID(id))), len(tw.one.streams(t, tallyID(id))); got != want {
		t.Errorf("with runs %d streams stored, one at a time %d", got, want)
	}
}

// atMost is a middleware letting at most n commands through at once; the
// others wait for a slot.
func atMost(n int) aggregate.Middleware {
	slots := make(chan struct{}, n)
	return func(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			slots <- struct{}{}
			defer func() { <-slots }()
			return next(ctx, cmd)
		}
	}
}

// counter is a middleware counting the commands it sees, and a
// PhaseObserver counting each command's appends.
type counter struct {
	mu      sync.Mutex
	seen    map[string]int
	appends map[string]int
}

func newCounter() *counter { return &counter{seen: map[string]int{}, appends: map[string]int{}} }

func (c *counter) middleware(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
	return func(ctx context.Context, cmd *factum.Command) factum.Signal {
		c.mu.Lock()
		c.seen[cmd.ID]++
		c.mu.Unlock()
		return next(aggregate.WithCacheObserver(ctx, &runPhases{c: c, id: cmd.ID}), cmd)
	}
}

// runPhases is one command's observer.
type runPhases struct {
	c  *counter
	id string
}

func (p *runPhases) ObserveCache(bool) {}

func (p *runPhases) StartPhase(ctx context.Context, ph aggregate.Phase) context.Context {
	if ph == aggregate.PhaseAppend {
		p.c.mu.Lock()
		p.c.appends[p.id]++
		p.c.mu.Unlock()
	}
	return ctx
}

func (p *runPhases) EndPhase(context.Context, aggregate.Phase, error) {}

func (c *counter) counts(id string) (seen, appends int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[id], c.appends[id]
}

// A run of N queued commands of one aggregate is appended as one group,
// and the middleware sees each command once, with one append phase; when
// the group fails, each command still passes the middleware once and is
// appended on its own.
func TestRunIsOneGroup(t *testing.T) {
	tests := []struct {
		name       string
		fault      groupFault
		wantGroups []int
		wantSingle int
		wantAppend int // append runPhases per command
	}{
		{"appended", groupAppends, []int{8}, 1, 1},
		{"refused", groupRefused, []int{8}, 1 + 8, 2},
		{"committed, answer lost", groupCommittedUnknown, []int{8}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Eight commands queued at once form one group however late
			// the machine schedules their goroutines.
			aggregate.SetArrivalGrace(t, 10*time.Second)
			store := newGroupStore()
			store.fault = func(int) groupFault { return tt.fault }
			cnt := newCounter()
			w := newWorld(t, store, 0, cnt.middleware)
			t.Cleanup(func() { w.shutdown(t) })
			w.run(t, []*factum.Command{tallyCmd("hot", openTally{})})
			cmds := addTallies("hot", 8, 1)
			w.run(t, cmds)
			groups, single := store.counts()
			if !slices.Equal(groups, tt.wantGroups) || single != tt.wantSingle {
				t.Fatalf("groups %v and %d single appends, want %v and %d", groups, single, tt.wantGroups, tt.wantSingle)
			}
			for i, c := range cmds {
				sig, n := w.signal(c.ID)
				if n != 1 || sig.Code != factum.CodeOk || sig.AggregateVersion != i+2 || sig.Duplicate {
					t.Fatalf("command %d: %d signals, %s v%d dup=%v, want one, Ok v%d", i, n, sig.Code, sig.AggregateVersion, sig.Duplicate, i+2)
				}
				if seen, appends := cnt.counts(c.ID); seen != 1 || appends != tt.wantAppend {
					t.Fatalf("command %d: seen %d times by the middleware, %d append runPhases; want 1 and %d", i, seen, appends, tt.wantAppend)
				}
			}
		})
	}
}

// The runs of different aggregates taken together from a lane run
// concurrently: the first aggregate's second command waits for the
// second aggregate's commands to start, which one lane running the runs
// in turn would never let happen.
func TestRunsOfAggregatesAreConcurrent(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	var overlapped bool
	mw := func(_ factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			switch cmd.AggregateID.ID {
			case "first":
				if cmd.IsCreate {
					break // the run's second command waits for its turn
				}
				select {
				case <-started:
					overlapped = true
				case <-time.After(30 * time.Second): // a failure, not a timing
				}
			case "second":
				once.Do(func() { close(started) })
			}
			return next(ctx, cmd)
		}
	}
	w := newWorld(t, newGroupStore(), 0, mw)
	t.Cleanup(func() { w.shutdown(t) })
	w.run(t, []*factum.Command{tallyCmd("first", openTally{}), tallyCmd("first", addTally{Qty: 1}),
		tallyCmd("second", openTally{}), tallyCmd("second", addTally{Qty: 1})})
	if !overlapped {
		t.Fatal("the second aggregate's run started only after the first's ended")
	}
}

// Shutdown drains with runs: every accepted command is processed once;
// past the deadline the queued ones get the closed signal and are not
// appended.
func TestShutdownWithRuns(t *testing.T) {
	t.Run("drain", func(t *testing.T) {
		w := newWorld(t, newGroupStore(), 0)
		w.hold(t)
		var cmds []*factum.Command
		for _, id := range []string{"a", "b", "c"} {
			cmds = append(cmds, tallyCmd(id, openTally{}))
			cmds = append(cmds, addTallies(id, 20, 0)...)
		}
		w.send(t, cmds)
		close(w.gate.release)
		if err := w.disp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		for i, c := range cmds {
			if sig, n := w.signal(c.ID); n != 1 || sig.Code != factum.CodeOk {
				t.Fatalf("command %d: %d signals, %s (%s)", i, n, sig.Code, sig.Message)
			}
		}
		if groups, _ := w.store.counts(); len(groups) == 0 {
			t.Fatal("no group was appended")
		}
	})
	t.Run("deadline", func(t *testing.T) {
		w := newWorld(t, newGroupStore(), 0)
		w.hold(t)
		cmds := addTallies("late", 10, 0)
		w.send(t, cmds)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// The barrier holds the lane until the deadline's cancellation.
		if err := w.disp.Shutdown(ctx); err == nil {
			t.Fatal("Shutdown past its deadline returned nil")
		}
		for i, c := range cmds {
			if sig, n := w.signal(c.ID); n != 1 || sig.Code != factum.CodeTooManyRequests {
				t.Fatalf("command %d: %d signals, %s, want one TooManyRequests", i, n, sig.Code)
			}
		}
		if got := w.streams(t, tallyID("late")); len(got) != 0 {
			t.Fatalf("stored %v past the deadline", got)
		}
	})
}

// A middleware letting only two commands through at once holds the third
// of a run until the first two end: their group ends without the third
// (after arrivalGrace) instead of waiting for it, and the rest of the run
// forms groups of its own.
func TestRunUnderABoundOnConcurrentCommands(t *testing.T) {
	store := newGroupStore()
	w := newWorld(t, store, 0, atMost(2))
	t.Cleanup(func() { w.shutdown(t) })
	w.run(t, []*factum.Command{tallyCmd("bounded", openTally{})})
	cmds := addTallies("bounded", 8, 1)
	w.run(t, cmds)
	for i, c := range cmds {
		if sig, n := w.signal(c.ID); n != 1 || sig.Code != factum.CodeOk || sig.AggregateVersion != i+2 {
			t.Fatalf("command %d: %d signals, %s v%d, want Ok v%d", i, n, sig.Code, sig.AggregateVersion, i+2)
		}
	}
	if groups, _ := store.counts(); len(groups) < 2 {
		t.Fatalf("groups %v: the run's commands cannot all have been in one", groups)
	}
}

// A run longer than a store's group takes is appended as several groups
// of at most eventstore.MaxGroup streams.
func TestLongRunIsSplitIntoGroups(t *testing.T) {
	store := newGroupStore()
	w := newWorld(t, store, 100)
	t.Cleanup(func() { w.shutdown(t) })
	cmds := append([]*factum.Command{tallyCmd("long", openTally{})}, addTallies("long", eventstore.MaxGroup+5, 0)...)
	w.run(t, cmds)
	for i, c := range cmds {
		if sig, n := w.signal(c.ID); n != 1 || sig.Code != factum.CodeOk || sig.AggregateVersion != i+1 {
			t.Fatalf("command %d: %d signals, %s v%d, want Ok v%d", i, n, sig.Code, sig.AggregateVersion, i+1)
		}
	}
	groups, _ := store.counts()
	total := 0
	for _, g := range groups {
		if g > eventstore.MaxGroup {
			t.Fatalf("a group of %d streams, more than %d", g, eventstore.MaxGroup)
		}
		total += g
	}
	if total != len(cmds) || len(groups) < 2 {
		t.Fatalf("groups %v for %d commands", groups, len(cmds))
	}
}
