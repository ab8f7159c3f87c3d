package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/enginetest"
)

// The test aggregate: a counter.
type Counter struct {
	Total int
	Adds  int
}

type Open struct{}
type Add struct{ N int }
type Reject struct{}
type Explode struct{}
type Block struct{}
type Fire struct{}

type Opened struct{}
type Added struct{ N int }

// Validate makes Add a self-validating command body.
func (a Add) Validate() error {
	if a.N < 0 {
		return command.ValidationErrors{{Field: "n", Message: "must not be negative"}}
	}
	return nil
}

// gate lets a test hold Block commands inside their handler.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 1024), release: make(chan struct{})}
}

func counterType(g *gate) *aggregate.Definition[Counter] {
	return aggregate.New[Counter]("test", "counter",
		aggregate.Source(func(c *Counter, e Added) { c.Total += e.N; c.Adds++ }),
		aggregate.Emits[Counter, Opened](),
		aggregate.Handle(func(_ context.Context, _ Counter, _ Open) ([]any, error) {
			return []any{Opened{}}, nil
		}, aggregate.Create()),
		aggregate.Handle(func(_ context.Context, _ Counter, a Add) ([]any, error) {
			return []any{Added(a)}, nil
		}, aggregate.AllowCreate()),
		aggregate.Handle(func(_ context.Context, _ Counter, _ Reject) ([]any, error) {
			return nil, factum.IllegalState("rejected by rule")
		}, aggregate.AllowCreate()),
		aggregate.Handle(func(_ context.Context, _ Counter, _ Explode) ([]any, error) {
			panic("boom")
		}, aggregate.AllowCreate()),
		aggregate.Handle(func(ctx context.Context, _ Counter, _ Block) ([]any, error) {
			if g != nil {
				g.entered <- struct{}{}
				select {
				case <-g.release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return []any{Added{N: 1}}, nil
		}, aggregate.AllowCreate()),
		aggregate.Handle(func(_ context.Context, _ Counter, _ Fire) ([]any, error) {
			return []any{Added{N: 1}}, nil
		}, aggregate.AllowCreate(), aggregate.Void()),
	)
}

// newRuntime starts a runtime over a memory store and shuts it down at
// cleanup.
func newRuntime(t testing.TB, cfg engine.Config, g *gate) (*engine.Engine, *aggregate.Definition[Counter]) {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = eventstore.NewMemory()
	}
	def := counterType(g)
	rt, err := engine.New(cfg, def)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	enginetest.Run(t, rt)
	return rt, def
}

func processed() command.WaitPlan { return command.Wait(factum.StageProcessed) }

// consumers is a fixed function registry for branch-stage tests.
type consumers struct {
	mu  sync.Mutex
	fns map[factum.CommandStage][]factum.Function
}

func (c *consumers) FunctionsFor(stage factum.CommandStage, _ factum.NamedAggregate, _ []string) []factum.Function {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fns[stage]
}

func mustCode(t *testing.T, err error, want factum.Code) {
	t.Helper()
	if got := factum.CodeOf(err); got != want {
		t.Fatalf("error code = %s (%v), want %s", got, err, want)
	}
}

func deleteBody() any  { return aggregate.DeleteAggregate{} }
func recoverBody() any { return aggregate.RecoverAggregate{} }

func zeroStored(id factum.AggregateID) aggregate.StoredState {
	return aggregate.StoredState{ID: id}
}
