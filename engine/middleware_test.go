package engine_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/enginetest"
)

// The engine's middleware wraps every aggregate type's and every event
// function's own, on both pipelines, and sees each command and delivery.
func TestEngineMiddlewareIsOutermost(t *testing.T) {
	var mu sync.Mutex
	var log []string
	note := func(s string) {
		mu.Lock()
		log = append(log, s)
		mu.Unlock()
	}
	cmdMW := func(name string) aggregate.Middleware {
		return func(named factum.NamedAggregate, next aggregate.CommandFunc) aggregate.CommandFunc {
			return func(ctx context.Context, cmd *factum.Command) factum.Signal {
				note(name + ">" + named.Aggregate)
				sig := next(ctx, cmd)
				note("<" + name + " " + string(sig.Code))
				return sig
			}
		}
	}
	evMW := func(name string) event.Middleware {
		return func(h *event.Handler, next event.StreamFunc) event.StreamFunc {
			return func(ctx context.Context, s *factum.EventStream) error {
				note(name + ">" + h.Function.Processor)
				return next(ctx, s)
			}
		}
	}
	def := counterType(nil)
	others := aggregate.New[Counter]("test", "other",
		aggregate.Source(func(c *Counter, e Added) { c.Total += e.N }),
		aggregate.Handle(func(_ context.Context, _ Counter, a Add) ([]any, error) { return []any{Added(a)}, nil }, aggregate.AllowCreate()),
		aggregate.WithMiddleware[Counter](cmdMW("type")))
	proj := &totals{}
	p := proj.processor(t, "totals", nil)
	wrapped, err := event.NewProcessor("test", "watched", factum.StageProjected, event.WithMiddleware(evMW("proc")),
		event.On(func(context.Context, event.Message, Added) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	rt := enginetest.Start(t, engine.Config{
		Store:             eventstore.NewMemory(),
		CommandMiddleware: []aggregate.Middleware{cmdMW("engine")},
		EventMiddleware:   []event.Middleware{evMW("events")},
		Processors:        []*event.Processor{p, wrapped},
	}, def, others)
	ctx := context.Background()
	if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(def.ID("c-1"), Add{N: 1}), command.Wait(factum.StageProjected)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := slices.Clone(log)
	log = nil
	mu.Unlock()
	slices.Sort(got[1:]) // the consumers run concurrently with each other and the signal
	if want := []string{"engine>counter", "<engine Ok", "events>totals", "events>watched", "proc>watched"}; !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(others.ID("o-1"), Add{N: 1}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The consumers may see the stream meanwhile: only the command side.
	commands := slices.DeleteFunc(slices.Clone(log), func(s string) bool { return strings.HasPrefix(s, "events>") || strings.HasPrefix(s, "proc>") })
	if want := []string{"engine>other", "type>other", "<type Ok", "<engine Ok"}; !slices.Equal(commands, want) {
		t.Fatalf("calls %v, want %v", commands, want)
	}
}
