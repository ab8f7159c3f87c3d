package projection_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/projection"
)

// The component tests' aggregates: carts, whose items a projection counts,
// and notes, which no projection consumes.
type cart struct{ Items int }
type addItem struct{ Fail bool }
type itemAdded struct{ Fail bool }
type note struct{}
type writeNote struct{}
type noteWritten struct{}

var (
	carts = factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
	notes = factum.NamedAggregate{Context: "shop", Aggregate: "note"}
)

func shopTypes() []aggregate.Type {
	return []aggregate.Type{
		aggregate.New[cart]("shop", "cart",
			aggregate.Source(func(c *cart, _ itemAdded) { c.Items++ }),
			aggregate.Handle(func(_ context.Context, _ cart, a addItem) ([]any, error) {
				return []any{itemAdded(a)}, nil
			}, aggregate.AllowCreate()),
		),
		aggregate.New[note]("shop", "note",
			aggregate.Emits[note, noteWritten](),
			aggregate.Handle(func(_ context.Context, _ note, _ writeNote) ([]any, error) {
				return []any{noteWritten{}}, nil
			}, aggregate.AllowCreate()),
		),
	}
}

// cartItems counts each cart's items in cart_items; a stream whose event
// says Fail fails.
func cartItems(t *testing.T) *projection.Projection {
	t.Helper()
	p, err := projection.New("shop", "cart_items",
		func(ctx context.Context, tx projection.Tx, s *factum.EventStream) error {
			if strings.Contains(string(s.Events[0].Body), "true") {
				return factum.Errorf(factum.CodeIllegalState, "cart %s refused", s.AggregateID.ID)
			}
			_, err := tx.Exec(ctx, `INSERT INTO cart_items (cart, items) VALUES ($1, 1)
				ON CONFLICT (cart) DO UPDATE SET items = cart_items.items + 1`, s.AggregateID.ID)
			return err
		},
		projection.From(carts),
		projection.Setup(func(ctx context.Context, tx projection.Tx) error {
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS cart_items (cart TEXT PRIMARY KEY, items INTEGER NOT NULL)`)
			return err
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// items reads a cart's count from the read model in a transaction of its
// own.
func items(t *testing.T, ps projection.Store, id string) int {
	t.Helper()
	ctx := context.Background()
	tx, err := ps.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var n int
	if err := tx.QueryRow(ctx, `SELECT items FROM cart_items WHERE cart = $1`, id).Scan(&n); err != nil {
		t.Fatalf("cart %s: %v", id, err)
	}
	return n
}

// startShop starts an engine with the component and shuts it down at the
// test's end.
func startShop(t *testing.T, cfg engine.Config) *engine.Engine {
	t.Helper()
	return enginetest.Start(t, cfg, shopTypes()...)
}

// A PROJECTED wait returns after the projection's transaction committed:
// a read right after it sees the write, every time.
func TestComponentReadAfterWrite(t *testing.T) {
	forEachComponentBackend(t, func(t *testing.T, b componentBackend) {
		es, ps := b.open(t)
		p := cartItems(t)
		comp := projection.NewComponent(projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{p}})
		eng := startShop(t, engine.Config{Store: es, Components: []engine.Component{comp}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for i := 1; i <= 10; i++ {
			res, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(carts.WithID("cart-1"), addItem{}),
				command.Wait(factum.StageProjected).Within(20*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if res.Code != factum.CodeOk || res.Function != p.Function() || res.Note != "" {
				t.Fatalf("command %d: %+v", i, res)
			}
			if got := items(t, ps, "cart-1"); got != i {
				t.Fatalf("after PROJECTED of command %d the read model holds %d items", i, got)
			}
		}
	})
}

// A command whose events no projection consumes completes its PROJECTED
// wait at once, with the gateway's note.
func TestComponentNoConsumerDoesNotWait(t *testing.T) {
	forEachComponentBackend(t, func(t *testing.T, b componentBackend) {
		es, ps := b.open(t)
		comp := projection.NewComponent(projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{cartItems(t)}})
		eng := startShop(t, engine.Config{Store: es, Components: []engine.Component{comp}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		res, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(notes.WithID("n-1"), writeNote{}),
			command.Wait(factum.StageProjected).Within(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if res.Note == "" || time.Since(start) > 10*time.Second {
			t.Fatalf("a wait nobody consumes: %+v after %v", res, time.Since(start))
		}
	})
}

// A stream the projection keeps failing on goes to the engine's failure
// recorder; the waiter gets the failure, and the runner moves on.
func TestComponentRecordsFailures(t *testing.T) {
	forEachComponentBackend(t, func(t *testing.T, b componentBackend) {
		es, ps := b.open(t)
		p := cartItems(t)
		var recorded atomic.Int32
		rec := event.FailureRecorderFunc(func(_ context.Context, f event.Failure) error {
			if f.Function == p.Function() {
				recorded.Add(1)
			}
			return nil
		})
		comp := projection.NewComponent(projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{p},
			Runner: projection.Config{Attempts: 1}})
		eng := startShop(t, engine.Config{Store: es, Failures: rec, Components: []engine.Component{comp}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := eng.Gateway().SendAndWait(ctx, factum.NewCommand(carts.WithID("cart-2"), addItem{Fail: true}),
			command.Wait(factum.StageProjected).Within(20*time.Second))
		if err == nil && res.Code == factum.CodeOk {
			t.Fatalf("a failing projection's wait succeeded: %+v", res)
		}
		if recorded.Load() != 1 {
			t.Fatalf("%d failures recorded, want 1", recorded.Load())
		}
		res, err = eng.Gateway().SendAndWait(ctx, factum.NewCommand(carts.WithID("cart-2"), addItem{}),
			command.Wait(factum.StageProjected).Within(20*time.Second))
		if err != nil || res.Code != factum.CodeOk {
			t.Fatalf("after a recorded failure: %+v, %v", res, err)
		}
		if got := items(t, ps, "cart-2"); got != 1 {
			t.Fatalf("read model holds %d items, want 1", got)
		}
	})
}

// Shutdown stops the runners: no runner goroutine is left.
func TestComponentShutdownStopsRunners(t *testing.T) {
	es, ps := componentBackends()[0].open(t)
	comp := projection.NewComponent(projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{cartItems(t)}})
	eng := enginetest.Start(t, engine.Config{Store: es, Components: []engine.Component{comp}}, shopTypes()...)
	for deadline := time.Now().Add(5 * time.Second); !running("projection.(*Runner).Run"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no runner runs after Start")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := eng.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"projection.(*Runner).Run", "projection.(*Component).Run"} {
		if running(fn) {
			t.Fatalf("%s still runs after Shutdown", fn)
		}
	}
}

// running reports whether a goroutine's stack holds fn.
func running(fn string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
}

// engine.New refuses a component with a bad config.
func TestComponentRefusesBadConfig(t *testing.T) {
	es, ps := componentBackends()[0].open(t)
	p := cartItems(t)
	for _, tc := range []struct {
		name string
		cfg  projection.ComponentConfig
	}{
		{"no store", projection.ComponentConfig{Projections: []*projection.Projection{p}}},
		{"no projections", projection.ComponentConfig{Store: ps}},
		{"nil projection", projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{nil}}},
		{"twice", projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{p, p}}},
		{"runner log", projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{p}, Runner: projection.Config{Log: es}}},
		{"runner store", projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{p}, Runner: projection.Config{Store: ps}}},
		{"negative drain", projection.ComponentConfig{Store: ps, Projections: []*projection.Projection{p}, DrainTimeout: -time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.New(engine.Config{Store: es, Components: []engine.Component{projection.NewComponent(tc.cfg)}}, shopTypes()...)
			if err == nil || factum.AsError(err).Code != factum.CodeIllegalArgument {
				t.Fatalf("engine.New: %v, want IllegalArgument", err)
			}
			var fe *factum.Error
			if !errors.As(err, &fe) {
				t.Fatalf("engine.New: %v is not a factum error", err)
			}
		})
	}
}
