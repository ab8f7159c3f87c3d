package event_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
)

// calls is a log of middleware calls, safe for concurrent use.
type calls struct {
	mu   sync.Mutex
	log  []string
	errs []error
}

// mw returns a middleware that logs "name>fn" before and "<name" after
// each delivery, and the error it saw.
func (c *calls) mw(name string) event.Middleware {
	return func(h *event.Handler, next event.StreamFunc) event.StreamFunc {
		fn := h.Function.Name
		return func(ctx context.Context, s *factum.EventStream) error {
			c.add(name + ">" + fn)
			err := next(ctx, s)
			c.mu.Lock()
			c.log = append(c.log, "<"+name)
			c.errs = append(c.errs, err)
			c.mu.Unlock()
			return err
		}
	}
}

func (c *calls) add(s string) {
	c.mu.Lock()
	c.log = append(c.log, s)
	c.mu.Unlock()
}

func (c *calls) snapshot() ([]string, []error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.log), slices.Clone(c.errs)
}

// The consumer's middleware (the engine's) wraps the processor's, which
// wraps the function's, the first of each list outermost; a function's
// middleware applies to that function only.
func TestEventMiddlewareOrderAndScope(t *testing.T) {
	st := eventstore.NewMemory()
	cl := &calls{}
	p := event.MustProcessor("shop", "mw", factum.StageProjected,
		event.WithMiddleware(cl.mw("p1"), cl.mw("p2")),
		event.On(func(context.Context, event.Message, ItemAdded) error { cl.add("added"); return nil },
			event.WithFunctionMiddleware(cl.mw("f1"))),
		event.On(func(context.Context, event.Message, ItemRemoved) error { cl.add("removed"); return nil }),
	)
	rec := &recorder{}
	c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), Notify: rec.notify,
		Middleware: []event.Middleware{cl.mw("e1"), cl.mw("e2")}})
	if err != nil {
		t.Fatal(err)
	}
	appendStream(t, st, "a", 1, "item_added")
	appendStream(t, st, "a", 2, "item_removed")
	start(t, c)
	waitFor(t, "two signals", func() bool { _, s := rec.snapshot(); return len(s) == 2 })
	log, _ := cl.snapshot()
	want := []string{
		"e1>on_item_added", "e2>on_item_added", "p1>on_item_added", "p2>on_item_added", "f1>on_item_added", "added", "<f1", "<p2", "<p1", "<e2", "<e1",
		"e1>on_item_removed", "e2>on_item_removed", "p1>on_item_removed", "p2>on_item_removed", "removed", "<p2", "<p1", "<e2", "<e1",
	}
	if !slices.Equal(log, want) {
		t.Fatalf("calls\n%v\nwant\n%v", log, want)
	}
}

// A user middleware sees each delivery once, with its final outcome, while
// the default Retry tries the function under it; the failure recorded
// counts the attempts. A panic reaches the middleware as an
// InternalServerError from the default Recover, and the consumer goes on.
func TestEventMiddlewareSeesEachDeliveryOnce(t *testing.T) {
	st := eventstore.NewMemory()
	cl := &calls{}
	var mu sync.Mutex
	tries := map[string]int{}
	p := event.MustProcessor("shop", "flaky", factum.StageProjected,
		event.On(func(_ context.Context, m event.Message, _ ItemAdded) error {
			id := m.Stream.AggregateID.ID
			mu.Lock()
			tries[id]++
			n := tries[id]
			mu.Unlock()
			switch {
			case id == "panics":
				panic("boom")
			case id == "always":
				return errors.New("down")
			case id == "recovers" && n < 3:
				return errors.New("not yet")
			}
			return nil
		}))
	var fmu sync.Mutex
	var failures []event.Failure
	rec := &recorder{}
	c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), Notify: rec.notify,
		Attempts: 3, Backoff: time.Microsecond, Logger: quiet, Middleware: []event.Middleware{cl.mw("user")},
		Failures: event.FailureRecorderFunc(func(_ context.Context, f event.Failure) error {
			fmu.Lock()
			failures = append(failures, f)
			fmu.Unlock()
			return nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	appendStream(t, st, "recovers", 1, "item_added")
	appendStream(t, st, "always", 1, "item_added")
	appendStream(t, st, "panics", 1, "item_added")
	appendStream(t, st, "fine", 1, "item_added")
	start(t, c)
	waitFor(t, "four signals", func() bool { _, s := rec.snapshot(); return len(s) == 4 })
	log, errs := cl.snapshot()
	if len(log) != 8 {
		t.Fatalf("middleware calls %v, want one per delivery", log)
	}
	if errs[0] != nil || errs[1] == nil || factum.CodeOf(errs[2]) != factum.CodeInternalServerError || !strings.Contains(errs[2].Error(), "panicked") || errs[3] != nil {
		t.Fatalf("outcomes seen: %v", errs)
	}
	mu.Lock()
	if tries["recovers"] != 3 || tries["always"] != 3 || tries["panics"] != 3 || tries["fine"] != 1 {
		t.Fatalf("tries %v", tries)
	}
	mu.Unlock()
	fmu.Lock()
	defer fmu.Unlock()
	if len(failures) != 2 || failures[0].Attempts != 3 || failures[1].Attempts != 3 {
		t.Fatalf("failures %+v", failures)
	}
}

type ctxKey struct{}

// The default Timeout bounds each attempt, also under a middleware that
// replaces the context (whose values reach the function), and results
// added under it reach the signal.
func TestEventTimeoutUnderAContextMiddleware(t *testing.T) {
	st := eventstore.NewMemory()
	withValue := func(h *event.Handler, next event.StreamFunc) event.StreamFunc {
		return func(ctx context.Context, s *factum.EventStream) error {
			return next(context.WithValue(ctx, ctxKey{}, "traced"), s)
		}
	}
	p := event.MustProcessor("shop", "slow", factum.StageProjected,
		event.On(func(ctx context.Context, m event.Message, _ ItemAdded) error {
			if ctx.Value(ctxKey{}) != "traced" {
				return errors.New("the middleware's value is missing")
			}
			event.AddResult(ctx, "seen", true)
			if m.Stream.AggregateID.ID == "stuck" {
				// A context derived from the function's ends with it.
				derived, cancel := context.WithCancel(ctx)
				defer cancel()
				<-derived.Done()
				if _, ok := ctx.Deadline(); !ok {
					return errors.New("no deadline")
				}
				return ctx.Err()
			}
			return nil
		}, event.WithFunctionMiddleware(withValue)))
	rec := &recorder{}
	c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), Notify: rec.notify,
		HandlerTimeout: 30 * time.Millisecond, Attempts: 2, Backoff: time.Microsecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	appendStream(t, st, "ok", 1, "item_added")
	appendStream(t, st, "stuck", 1, "item_added")
	began := time.Now()
	start(t, c)
	waitFor(t, "two signals", func() bool { _, s := rec.snapshot(); return len(s) == 2 })
	_, sigs := rec.snapshot()
	if !sigs[0].Succeeded() || sigs[0].Results["seen"] != true {
		t.Fatalf("first signal %+v", sigs[0])
	}
	if sigs[1].Succeeded() || !strings.Contains(sigs[1].Message, "deadline") {
		t.Fatalf("second signal %+v, want a timeout", sigs[1])
	}
	if took := time.Since(began); took < 60*time.Millisecond {
		t.Fatalf("took %v: two attempts of 30 ms each did not both time out", took)
	}
}

// Bind makes On decode with a codec registry (its upcasters apply) and
// leaves the definition unbound; an unbound processor decodes JSON
// straight into the type; a registry naming the type otherwise is refused.
func TestBindDecodesWithTheRegistry(t *testing.T) {
	var mu sync.Mutex
	var skus []string
	p := event.MustProcessor("shop", "bound", factum.StageProjected,
		event.On(func(_ context.Context, _ event.Message, e ItemAdded) error {
			mu.Lock()
			skus = append(skus, e.SKU)
			mu.Unlock()
			return nil
		}))
	reg := codec.NewRegistry()
	codec.MustRegister[ItemAdded](reg, codec.Revision(1))
	if err := reg.AddUpcaster("item_added", 0, func(b json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"sku":"upcast"}`), nil
	}); err != nil {
		t.Fatal(err)
	}
	bound, err := p.Bind(reg)
	if err != nil {
		t.Fatal(err)
	}
	s := &factum.EventStream{AggregateID: carts.WithID("a"), Version: 1, Events: []factum.DomainEvent{
		{ID: "e1", Name: "item_added", Revision: 0, Body: json.RawMessage(`{"sku":"raw"}`)},
	}}
	hb, _ := bound.Handler("on_item_added")
	hp, _ := p.Handler("on_item_added")
	if err := hb.Handle(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if err := hp.Handle(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if want := []string{"upcast", "raw"}; !slices.Equal(skus, want) {
		t.Fatalf("decoded %v, want %v (bound, then the unbound definition)", skus, want)
	}
	other := codec.NewRegistry()
	codec.MustRegister[ItemAdded](other, codec.Name("cart_item_added"))
	if _, err := p.Bind(other); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("Bind to a registry naming the event otherwise: %v", err)
	}
}

// A processor's own settings override the consumer's Config for its
// consumer only: Attempts 1 over a Config of 5 tries a failing function
// once.
func TestProcessorSettingsOverrideTheConfig(t *testing.T) {
	st := eventstore.NewMemory()
	var mu sync.Mutex
	tries := 0
	p := event.MustProcessor("shop", "once", factum.StageProjected,
		event.WithSettings(event.Settings{Attempts: 1}),
		event.On(func(context.Context, event.Message, ItemAdded) error {
			mu.Lock()
			tries++
			mu.Unlock()
			return errors.New("down")
		}))
	if got := p.Settings(); got.Attempts != 1 {
		t.Fatalf("settings %+v", got)
	}
	rec := &recorder{}
	c, err := event.NewConsumer(p, event.Config{Log: st, Checkpoints: event.NewMemoryCheckpoints(), Notify: rec.notify,
		Attempts: 5, Backoff: time.Microsecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	appendStream(t, st, "a", 1, "item_added")
	start(t, c)
	waitFor(t, "a signal", func() bool { _, s := rec.snapshot(); return len(s) == 1 })
	mu.Lock()
	defer mu.Unlock()
	if tries != 1 {
		t.Fatalf("%d tries, want 1", tries)
	}
	if _, err := event.NewProcessor("shop", "bad", factum.StageProjected, event.WithSettings(event.Settings{BatchSize: -1}),
		event.On(func(context.Context, event.Message, ItemAdded) error { return nil })); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("negative setting: %v", err)
	}
}
