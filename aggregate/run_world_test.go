package aggregate_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
)

// tb is what the world needs of a test: *testing.T's and rapid.T's.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// runTallies is the aggregate the run tests drive (over tally): its handlers reject
// depending on the state, one binds an effect, one event's sourcing
// function panics, and a middleware answers one command itself.

type (
	openTally  struct{}
	addTally   struct{ Qty int } // rejected past 10; Qty 3 makes two events
	takeTally  struct{ Qty int } // rejected below 0
	claimTally struct{ Key string }
	skipTally  struct{} // answered by a middleware, never decided
)

type (
	tallyOpened  struct{}
	tallyAdded   struct{ Qty int }
	tallyTaken   struct{ Qty int }
	tallyClaimed struct{ Key string }
)

// panicQty makes tallyAdded's sourcing function panic.
const panicQty = 4

// claims is an effect's world: which aggregate holds each key.
type claims struct {
	mu    sync.Mutex
	owner map[string]string
}

// claim is the effect of claimTally: the key for the aggregate.
type claim struct {
	c          *claims
	key, owner string
}

func (e claim) Apply(context.Context) (bool, error) {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	switch e.c.owner[e.key] {
	case e.owner:
		return false, nil
	case "":
		e.c.owner[e.key] = e.owner
		return true, nil
	}
	return false, factum.IllegalState("key " + e.key + " is taken")
}

func (e claim) Undo(context.Context) error {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	if e.c.owner[e.key] == e.owner {
		delete(e.c.owner, e.key)
	}
	return nil
}

func runTallies(cl *claims) *aggregate.Definition[tally] {
	return aggregate.New[tally]("runs", "tally",
		aggregate.Emits[tally, tallyOpened](),
		aggregate.Emits[tally, tallyClaimed](),
		aggregate.Source(func(s *tally, e tallyAdded) {
			if e.Qty == panicQty {
				panic("tallyAdded of 4 cannot be applied")
			}
			s.N += e.Qty
		}),
		aggregate.Source(func(s *tally, e tallyTaken) { s.N -= e.Qty }),
		aggregate.Handle(func(context.Context, tally, openTally) ([]any, error) {
			return []any{tallyOpened{}}, nil
		}, aggregate.Create()),
		aggregate.Handle(func(_ context.Context, s tally, c addTally) ([]any, error) {
			if s.N+c.Qty > 10 {
				return nil, factum.IllegalState(fmt.Sprintf("%d more is past 10", c.Qty))
			}
			if c.Qty == 3 {
				return []any{tallyAdded{Qty: 1}, tallyAdded{Qty: 2}}, nil
			}
			return []any{tallyAdded(c)}, nil
		}),
		aggregate.Handle(func(_ context.Context, s tally, c takeTally) ([]any, error) {
			if s.N < c.Qty {
				return nil, factum.IllegalState(fmt.Sprintf("%d less is below 0", c.Qty))
			}
			return []any{tallyTaken(c)}, nil
		}),
		aggregate.Handle(func(ctx context.Context, _ tally, c claimTally) ([]any, error) {
			owner := aggregate.CommandFrom(ctx).AggregateID.ID
			if err := aggregate.Bind(ctx, claim{c: cl, key: c.Key, owner: owner}); err != nil {
				return nil, err
			}
			return []any{tallyClaimed(c)}, nil
		}),
		aggregate.Handle(func(context.Context, tally, skipTally) ([]any, error) {
			return nil, factum.IllegalState("skip_tally reached its handler")
		}),
	)
}

// tallyExecutor returns an executor of the tallies (with claims of their
// own) configured by cfg, its Codec a new registry.
func tallyExecutor(t tb, cfg aggregate.ExecutorConfig) command.RunExecutor {
	t.Helper()
	cfg.Codec = codec.NewRegistry()
	p, err := runTallies(&claims{owner: map[string]string{}}).NewExecutor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p.(command.RunExecutor)
}

// mustOpenTally opens the tally id through p.
func mustOpenTally(t tb, p aggregate.Executor, id string) {
	t.Helper()
	if sig := p.Process(context.Background(), tallyCmd(id, openTally{})); sig.Code != factum.CodeOk {
		t.Fatalf("open: %s %s", sig.Code, sig.Message)
	}
}

// skipping answers skip_tally itself, never calling next.
func skipping(named factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
	return func(ctx context.Context, cmd *factum.Command) factum.Signal {
		if cmd.Name != factum.NameOf(skipTally{}) {
			return next(ctx, cmd)
		}
		return factum.Signal{CommandID: cmd.ID, RequestID: cmd.RequestIDOrID(), Stage: factum.StageProcessed,
			AggregateID: cmd.AggregateID, Code: factum.CodeIllegalArgument, Message: "skipped", SignalTime: time.Now()}
	}
}

// barrierType is the aggregate type of the command that holds a lane.
var barrierType = factum.NamedAggregate{Context: "runs", Aggregate: "barrier"}

// gated is an executor that holds barrier commands until released, so
// that what is sent meanwhile queues up behind them into one run.
type gated struct {
	next    command.RunExecutor
	started chan struct{}
	release chan struct{}
}

func (g *gated) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	if cmd.AggregateID.NamedAggregate == barrierType {
		g.started <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done(): // the shutdown deadline
		}
		return factum.Signal{CommandID: cmd.ID, Stage: factum.StageProcessed, AggregateID: cmd.AggregateID, Code: factum.CodeOk}
	}
	return g.next.Process(ctx, cmd)
}

func (g *gated) TakesRuns() bool { return g.next.TakesRuns() }

func (g *gated) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	g.next.ProcessRun(ctx, cmds, skip, emit)
}

// world is one executor over its own store behind a dispatcher of one
// lane.
type world struct {
	store  *groupStore
	claims *claims
	def    *aggregate.Definition[tally]
	gate   *gated
	disp   *command.Dispatcher
	mu     sync.Mutex
	sigs   map[string]factum.Signal // by command ID
	counts map[string]int           // signals by command ID
	states []aggregate.StoredState
}

// Signal implements command.Sink.
func (w *world) Signal(s factum.Signal) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sigs[s.CommandID] = s
	w.counts[s.CommandID]++
}

// ObserveState implements aggregate.StateObserver.
func (w *world) ObserveState(st aggregate.StoredState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.states = append(w.states, st)
}

// newWorld returns a started world whose dispatcher takes runs of up to
// maxRun, with mw around its executor.
func newWorld(t tb, store *groupStore, maxRun int, mw ...aggregate.Middleware) *world {
	t.Helper()
	w := &world{store: store, claims: &claims{owner: map[string]string{}}, sigs: map[string]factum.Signal{}, counts: map[string]int{}}
	w.def = runTallies(w.claims)
	p, err := w.def.NewExecutor(aggregate.ExecutorConfig{Store: store, Codec: codec.NewRegistry(), States: w,
		Middleware: append([]aggregate.Middleware{skipping}, mw...), Backoff: time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	w.gate = &gated{next: p.(command.RunExecutor), started: make(chan struct{}, 1), release: make(chan struct{})}
	w.disp, err = command.NewDispatcher(w.gate, w, command.DispatcherConfig{Lanes: 1, QueueSize: 1024, MaxRun: maxRun})
	if err != nil {
		t.Fatal(err)
	}
	w.disp.Start(context.Background())
	return w
}

// hold sends a barrier command and returns once the lane holds it.
func (w *world) hold(t tb) {
	t.Helper()
	c := factum.NewCommand(barrierType.WithID("b").WithTenant(factum.DefaultTenant), struct{}{})
	if err := w.disp.Send(context.Background(), &c); err != nil {
		t.Fatal(err)
	}
	<-w.gate.started
}

// send sends cmds to the dispatcher, in their order.
func (w *world) send(t tb, cmds []*factum.Command) {
	t.Helper()
	for _, c := range cmds {
		if err := w.disp.Send(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
}

// run sends cmds behind a barrier, so that they queue up, releases it and
// waits until every command was processed.
func (w *world) run(t tb, cmds []*factum.Command) {
	t.Helper()
	w.hold(t)
	w.send(t, cmds)
	w.gate.release <- struct{}{}
	for !w.disp.Idle() {
		time.Sleep(100 * time.Microsecond)
	}
}

func (w *world) shutdown(t tb) {
	t.Helper()
	close(w.gate.release)
	if err := w.disp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// signal returns the signal of a command and how many it got.
func (w *world) signal(id string) (factum.Signal, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sigs[id], w.counts[id]
}

// streams returns what the store holds of an aggregate, as comparable
// text: the stream's version, command, request, events and bodies.
func (w *world) streams(t tb, id factum.AggregateID) []string {
	t.Helper()
	ss, err := w.store.Load(context.Background(), id, 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range ss {
		line := fmt.Sprintf("v%d %s %s", s.Version, s.CommandID, s.RequestID)
		for _, e := range s.Events {
			line += fmt.Sprintf(" %s%s", e.Name, e.Body)
		}
		out = append(out, line)
	}
	return out
}
