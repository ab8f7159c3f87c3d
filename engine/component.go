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
	"github.com/factum-go/factum/component"
	"github.com/factum-go/factum/event"
)

// Component is a part of an application that lives with the engine
// (compensation, SQL projections): component.Component attached to an
// *Engine. Its lifecycle, for Config.Components in order, is
// component.Component's; the engine's snapshotter (Config.Snapshotter) is
// set up after them and attached and run last.
type Component = component.Component[*Engine]

// Env is what a component learns of the engine at Setup.
type Env = component.Env

// Parts is what a component brings to the engine.
type Parts = component.Parts

// Host is the engine as a component of package component's own sees it
// at Attach; *Engine implements it.
type Host = component.Host

var _ Host = (*Engine)(nil)

// member is one component as the engine drives it, whichever engine type
// it attaches to.
type member struct {
	name   string    // for errors
	comp   Component // the configured component; nil for the snapshotter
	setup  func(Env) (Parts, error)
	attach func(*Engine) error
	run    func(context.Context) error
}

// membersOf returns the configured components, the snapshotter last, and
// the snapshotter (nil for none).
func membersOf(cfg *Config) ([]member, component.Component[component.Host], error) {
	out := make([]member, 0, len(cfg.Components)+1)
	for i, comp := range cfg.Components {
		if comp == nil {
			return nil, nil, factum.IllegalArgument(fmt.Sprintf("engine: Config.Components[%d] is nil", i))
		}
		out = append(out, member{name: fmt.Sprintf("component %d", i), comp: comp, setup: comp.Setup, attach: comp.Attach, run: comp.Run})
	}
	sn, err := snapshotterOf(cfg)
	if err != nil {
		return nil, nil, err
	}
	if sn != nil {
		out = append(out, member{name: "snapshotter", setup: sn.Setup,
			attach: func(e *Engine) error { return sn.Attach(e) }, run: sn.Run})
	}
	return out, sn, nil
}

// components runs the configured components' Run functions.
type components struct {
	list   []member
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
		go func() { done <- c.run(cctx) }()
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
				errs = append(errs, fmt.Errorf("engine: %s: %w", cs.list[i].name, err))
			}
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("engine: %s did not stop: %w", cs.list[i].name, ctx.Err()))
		}
	}
	return errors.Join(errs...)
}

// assembly is what the components bring besides their types and
// processors, which join cfg's.
type assembly struct {
	consumers []command.Consumers
	states    aggregate.StateObserver
	// tune adjusts the consumer config of a component's processor.
	tune map[*event.Processor]func(*event.Processor, event.Config) event.Config
}

// setupComponents runs every member's Setup and merges its parts into cfg
// and the types.
func setupComponents(cfg *Config, c *codec.Registry, members []member, types []aggregate.Type) ([]aggregate.Type, assembly, error) {
	var a assembly
	if len(members) == 0 {
		return types, a, nil
	}
	env := Env{Store: cfg.Store, Snapshots: cfg.SnapshotStore, Codec: c}
	if len(types) > 0 {
		env.Context = types[0].Named().Context
	}
	types = append([]aggregate.Type(nil), types...)
	cfg.Processors = append([]*event.Processor(nil), cfg.Processors...)
	for _, m := range members {
		env.Types = types[:len(types):len(types)]
		parts, err := m.setup(env)
		if err != nil {
			return nil, a, fmt.Errorf("engine: %s: %w", m.name, err)
		}
		types = append(types, parts.Types...)
		cfg.Processors = append(cfg.Processors, parts.Processors...)
		if parts.Failures != nil {
			if cfg.Failures != nil {
				return nil, a, factum.IllegalArgument(fmt.Sprintf("engine: %s brings a failure recorder, and there is one already", m.name))
			}
			cfg.Failures = parts.Failures
		}
		if parts.Consumers != nil {
			a.consumers = append(a.consumers, parts.Consumers)
		}
		if parts.States != nil {
			if a.states != nil {
				return nil, a, factum.IllegalArgument(fmt.Sprintf("engine: %s brings a state observer, and there is one already", m.name))
			}
			a.states = parts.States
		}
		if parts.Consumer != nil {
			if a.tune == nil {
				a.tune = map[*event.Processor]func(*event.Processor, event.Config) event.Config{}
			}
			for _, p := range parts.Processors {
				a.tune[p] = parts.Consumer
			}
		}
	}
	return types, a, nil
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
