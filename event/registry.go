package event

import (
	"fmt"
	"slices"
	"sync"

	"github.com/factum-go/factum"
)

// Registry holds the processors of one runtime and answers which functions
// consume which events, so that a waiter for a branch stage knows whose
// signals to expect.
type Registry struct {
	processors []*Processor
	// consumers caches FunctionsFor's answers for one event name, which
	// the gateway asks for every command waiting for a branch stage.
	consumers sync.Map // consumersKey -> []factum.Function
}

type consumersKey struct {
	stage factum.CommandStage
	named factum.NamedAggregate
	event string
}

// NewRegistry returns a registry of the processors. Two processors with
// the same identity are an IllegalArgument error.
func NewRegistry(processors ...*Processor) (*Registry, error) {
	r := &Registry{}
	for _, p := range processors {
		if err := r.Add(p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add adds a processor; not safe to call while the registry is in use.
func (r *Registry) Add(p *Processor) error {
	for _, q := range r.processors {
		if q.Name() == p.Name() {
			return factum.IllegalArgument(fmt.Sprintf("processor %s is registered twice", p.Name()))
		}
	}
	r.processors = append(r.processors, p)
	r.consumers.Clear()
	return nil
}

// Processors returns the registered processors.
func (r *Registry) Processors() []*Processor { return slices.Clone(r.processors) }

// FunctionsFor returns the functions signalling stage that consume at least
// one of the events (by name) from an aggregate of the named type. The
// slice returned may be shared: callers must not modify it.
func (r *Registry) FunctionsFor(stage factum.CommandStage, named factum.NamedAggregate, eventNames []string) []factum.Function {
	if len(eventNames) != 1 {
		return r.functionsFor(stage, named, eventNames)
	}
	k := consumersKey{stage, named, eventNames[0]}
	if fns, ok := r.consumers.Load(k); ok {
		return fns.([]factum.Function)
	}
	fns := r.functionsFor(stage, named, eventNames)
	r.consumers.Store(k, fns)
	return fns
}

func (r *Registry) functionsFor(stage factum.CommandStage, named factum.NamedAggregate, eventNames []string) []factum.Function {
	var out []factum.Function
	for _, p := range r.processors {
		if p.stage != stage {
			continue
		}
		for _, h := range p.handlers {
			for _, n := range eventNames {
				if h.Consumes(named, n) {
					out = append(out, h.Function)
					break
				}
			}
		}
	}
	return out
}

// Function returns the handler with the given identity.
func (r *Registry) Function(f factum.Function) (*Handler, bool) {
	for _, p := range r.processors {
		if p.context == f.Context && p.name == f.Processor {
			return p.Handler(f.Name)
		}
	}
	return nil, false
}
