package event

import (
	"fmt"
	"slices"

	"github.com/factum-go/factum"
)

// Registry holds the processors of one runtime and answers which functions
// consume which events, so that a waiter for a branch stage knows whose
// signals to expect.
type Registry struct {
	processors []*Processor
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
	return nil
}

// Processors returns the registered processors.
func (r *Registry) Processors() []*Processor { return slices.Clone(r.processors) }

// FunctionsFor returns the functions signalling stage that consume at least
// one of the events (by name) from an aggregate of the named type.
func (r *Registry) FunctionsFor(stage factum.CommandStage, named factum.NamedAggregate, eventNames []string) []factum.Function {
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
