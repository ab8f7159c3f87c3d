package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/snapshot"
)

// Component is a part of an application that lives with the engine
// (compensation, say): it brings aggregate types and event functions,
// attaches to the engine once it is built, and runs work of its own from
// Start until Shutdown. Its lifecycle, for Config.Components in order:
//
//  1. Setup, at New, before the engine is built: the component learns the
//     engine's bounded context and stores (Env) and returns what it brings
//     (Parts), which joins the engine's own.
//  2. Attach, at New, once the engine is built (its Gateway, Registry and
//     Functions work). An error from Setup or Attach fails New.
//  3. Run, at Start, after the bus and the consumers have started, each in
//     a goroutine of its own. Run works until its ctx is cancelled and
//     then returns once the work in hand is done; a component with nothing
//     to run returns nil at once.
//  4. At Shutdown, first of all and in reverse order, the engine cancels
//     each Run and waits for it to return (at most until Shutdown's ctx
//     ends), then drains its own work: a component is a client of the
//     gateway, as HTTP is, and stops sending before the gateway closes.
//     The event functions it brought are drained with the engine's.
type Component interface {
	Setup(env Env) (Parts, error)
	Attach(e *Engine) error
	Run(ctx context.Context) error
}

// Env is what a component learns of the engine at Setup.
type Env struct {
	// Context is the bounded context of the engine's aggregate types (the
	// first type's when they name several, without a Storage).
	Context string
	// Store is the engine's event store.
	Store eventstore.Store
	// Snapshots is the engine's snapshot store; nil without one. With a
	// Storage it is a snapshot.QueryStore.
	Snapshots snapshot.Store
	// Codec is the engine's message type registry.
	Codec *codec.Registry
}

// Parts is what a component brings to the engine.
type Parts struct {
	// Types are aggregate types served next to the engine's own.
	Types []aggregate.Type
	// Processors are event functions run as consumer groups next to the
	// engine's own.
	Processors []*event.Processor
	// Failures, if set, records event-function failures; it is an
	// IllegalArgument error at New for it to meet another recorder
	// (Config.Failures or another component's).
	Failures event.FailureRecorder
	// Consumers, if set, tells branch-stage waits which functions of the
	// component's own (not Processors) consume which events: the gateway
	// asks it along with the engine's function registry (or
	// Config.Consumers), so a wait expects their signals too.
	Consumers command.Consumers
}

// components runs the configured components' Run functions.
type components struct {
	list   []Component
	cancel []context.CancelFunc
	done   []chan error
	mu     sync.Mutex
}

// start runs each component in a goroutine, in order.
func (cs *components) start(ctx context.Context) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, c := range cs.list {
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan error, 1)
		cs.cancel, cs.done = append(cs.cancel, cancel), append(cs.done, done)
		go func() { done <- c.Run(cctx) }()
	}
}

// stop cancels the components in reverse order, waiting for each to
// return before the next, until ctx ends. It returns the errors their Run
// returned, and ctx's if one had not returned by then.
func (cs *components) stop(ctx context.Context) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var errs []error
	for i := len(cs.done) - 1; i >= 0; i-- {
		cs.cancel[i]()
		select {
		case err := <-cs.done[i]:
			if err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, fmt.Errorf("engine: component %d: %w", i, err))
			}
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("engine: component %d did not stop: %w", i, ctx.Err()))
		}
	}
	return errors.Join(errs...)
}

// setupComponents runs every component's Setup and merges its parts into
// cfg and the types.
func setupComponents(cfg *Config, c *codec.Registry, types []aggregate.Type) ([]aggregate.Type, []command.Consumers, error) {
	if len(cfg.Components) == 0 {
		return types, nil, nil
	}
	env := Env{Store: cfg.Store, Snapshots: cfg.SnapshotStore, Codec: c}
	if len(types) > 0 {
		env.Context = types[0].Named().Context
	}
	types = append([]aggregate.Type(nil), types...)
	cfg.Processors = append([]*event.Processor(nil), cfg.Processors...)
	var consumers []command.Consumers
	for i, comp := range cfg.Components {
		if comp == nil {
			return nil, nil, factum.IllegalArgument(fmt.Sprintf("engine: Config.Components[%d] is nil", i))
		}
		parts, err := comp.Setup(env)
		if err != nil {
			return nil, nil, fmt.Errorf("engine: component %d: %w", i, err)
		}
		types = append(types, parts.Types...)
		cfg.Processors = append(cfg.Processors, parts.Processors...)
		if parts.Failures != nil {
			if cfg.Failures != nil {
				return nil, nil, factum.IllegalArgument(fmt.Sprintf("engine: component %d brings a failure recorder, and there is one already", i))
			}
			cfg.Failures = parts.Failures
		}
		if parts.Consumers != nil {
			consumers = append(consumers, parts.Consumers)
		}
	}
	return types, consumers, nil
}

// joinedConsumers answers with the functions of every one of its parts.
type joinedConsumers []command.Consumers

// FunctionsFor implements command.Consumers; it allocates only when more
// than one part names functions.
func (j joinedConsumers) FunctionsFor(stage factum.CommandStage, named factum.NamedAggregate, eventNames []string) []factum.Function {
	var out []factum.Function
	shared := true
	for _, c := range j {
		fns := c.FunctionsFor(stage, named, eventNames)
		switch {
		case len(fns) == 0:
		case len(out) == 0:
			out = fns
		default:
			if shared {
				out, shared = append([]factum.Function(nil), out...), false
			}
			out = append(out, fns...)
		}
	}
	return out
}
