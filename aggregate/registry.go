package aggregate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
)

// Type is an aggregate type whatever its state type: what a runtime, a
// gateway and the event side need to know of a Definition. *Definition[S]
// implements it.
type Type interface {
	// Named returns the aggregate type's name.
	Named() factum.NamedAggregate
	// Command returns the spec of a command the aggregate handles.
	Command(name string) (CommandSpec, bool)
	// Commands returns every command spec, sorted by name.
	Commands() []CommandSpec
	// Register adds the aggregate's command and event types to a codec
	// registry.
	Register(r *codec.Registry) error
	// NewExecutor returns an executor of this aggregate type's commands.
	NewExecutor(cfg ExecutorConfig) (Executor, error)
	// Fold applies streams to a stored state and returns the new one: the
	// snapshotter's way to advance a snapshot without knowing S.
	Fold(reg *codec.Registry, from StoredState, streams []factum.EventStream) (StoredState, error)
}

var _ Type = (*Definition[struct{}])(nil)

// Registry holds the aggregate types a runtime serves, by name. It is
// immutable after NewRegistry and safe for concurrent use.
type Registry struct {
	types map[factum.NamedAggregate]Type
}

// NewRegistry returns a registry of types. A type with option mistakes, or
// two types with one name, is an IllegalArgument error.
func NewRegistry(types ...Type) (*Registry, error) {
	r := &Registry{types: make(map[factum.NamedAggregate]Type, len(types))}
	for _, t := range types {
		if t == nil {
			return nil, factum.IllegalArgument("aggregate registry: nil type")
		}
		if e, ok := t.(interface{ Err() error }); ok {
			if err := e.Err(); err != nil {
				return nil, err
			}
		}
		n := t.Named()
		if _, dup := r.types[n]; dup {
			return nil, factum.IllegalArgument(fmt.Sprintf("aggregate registry: %s registered twice", n))
		}
		r.types[n] = t
	}
	return r, nil
}

// Lookup returns the type named n.
func (r *Registry) Lookup(n factum.NamedAggregate) (Type, bool) {
	t, ok := r.types[n]
	return t, ok
}

// Types returns every registered type, sorted by name.
func (r *Registry) Types() []Type {
	out := make([]Type, 0, len(r.types))
	for _, t := range r.types {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Type) int { return strings.Compare(a.Named().String(), b.Named().String()) })
	return out
}

// Register adds every type's commands and events to reg.
func (r *Registry) Register(reg *codec.Registry) error {
	for _, t := range r.Types() {
		if err := t.Register(reg); err != nil {
			return err
		}
	}
	return nil
}

// NewExecutor returns an executor that routes each command to the
// executor of its aggregate type, built from cfg. A command for a type the
// registry does not hold is answered with a NotFound signal.
func (r *Registry) NewExecutor(cfg ExecutorConfig) (Executor, error) {
	m := make(router, len(r.types))
	for n, t := range r.types {
		p, err := t.NewExecutor(cfg)
		if err != nil {
			return nil, err
		}
		m[n] = p
	}
	return m, nil
}

type router map[factum.NamedAggregate]Executor
