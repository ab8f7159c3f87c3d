package event

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
)

// Message is one event delivered to a function, with its stream.
type Message struct {
	// Stream is the stream the event belongs to; read-only.
	Stream *factum.EventStream
	// Event is the event; read-only.
	Event *factum.DomainEvent
}

// StreamFunc handles the events of one stream that its Handler consumes.
type StreamFunc func(ctx context.Context, s *factum.EventStream) error

// Handler is one event function.
type Handler struct {
	// Function is the function's stable identity.
	Function factum.Function
	// Stage is the wait stage the function signals: SNAPSHOT, PROJECTED,
	// EVENT_HANDLED or SAGA_HANDLED.
	Stage factum.CommandStage
	// Events lists the event names the function consumes; empty means
	// every event of the subscribed aggregates.
	Events []string
	// Aggregates restricts the function to streams of these aggregate
	// types; empty means any.
	Aggregates []factum.NamedAggregate
	// Handle is called once per stream holding at least one consumed
	// event.
	Handle StreamFunc

	// middleware wraps Handle (WithFunctionMiddleware).
	middleware []Middleware
	// bind, set by On, returns Handle decoding with a codec registry
	// (Processor.Bind).
	bind func(reg *codec.Registry) (StreamFunc, error)
}

// Consumes reports whether the function consumes the event name from an
// aggregate of the named type.
func (h *Handler) Consumes(named factum.NamedAggregate, eventName string) bool {
	if len(h.Aggregates) > 0 && !slices.Contains(h.Aggregates, named) {
		return false
	}
	return len(h.Events) == 0 || slices.Contains(h.Events, eventName)
}

// Wants reports whether the stream holds an event the function consumes
// (see Consumes): a consumer calls the function only with such streams.
func (h *Handler) Wants(s *factum.EventStream) bool {
	for i := range s.Events {
		if h.Consumes(s.AggregateID.NamedAggregate, s.Events[i].Name) {
			return true
		}
	}
	return false
}

// Processor is a named group of event functions run as one consumer group
// with one checkpoint.
type Processor struct {
	context, name string
	stage         factum.CommandStage
	handlers      []*Handler
	// middleware wraps every function (WithMiddleware).
	middleware []Middleware
	// settings override the consumer's Config (WithSettings).
	settings Settings
}

// Option adds a function to a processor.
type Option func(p *Processor) error

// NewProcessor returns the processor context/name whose functions signal
// stage. It is an IllegalArgument error to give an invalid name, a stage
// that is not a branch stage, no functions, or two functions of one name.
func NewProcessor(context, name string, stage factum.CommandStage, opts ...Option) (*Processor, error) {
	p := &Processor{context: context, name: name, stage: stage}
	if err := (factum.Function{Context: context, Processor: name, Name: "x"}).Validate(); err != nil {
		return nil, err
	}
	if !stage.IsBranch() {
		return nil, factum.IllegalArgument(fmt.Sprintf("processor %s/%s: stage %v is not a branch stage", context, name, stage))
	}
	for _, o := range opts {
		if err := o(p); err != nil {
			return nil, err
		}
	}
	if len(p.handlers) == 0 {
		return nil, factum.IllegalArgument(fmt.Sprintf("processor %s/%s has no functions", context, name))
	}
	return p, nil
}

// MustProcessor is NewProcessor that panics on error, for set-up code whose
// definitions are fixed.
func MustProcessor(context, name string, stage factum.CommandStage, opts ...Option) *Processor {
	p, err := NewProcessor(context, name, stage, opts...)
	if err != nil {
		panic(err)
	}
	return p
}

// Name returns the processor's identity as a Function with an empty Name.
func (p *Processor) Name() factum.Function {
	return factum.Function{Context: p.context, Processor: p.name}
}

// Stage returns the stage the processor's functions signal.
func (p *Processor) Stage() factum.CommandStage { return p.stage }

// Handlers returns the processor's functions.
func (p *Processor) Handlers() []*Handler { return slices.Clone(p.handlers) }

// Handler returns the function with the given name.
func (p *Processor) Handler(name string) (*Handler, bool) {
	for _, h := range p.handlers {
		if h.Function.Name == name {
			return h, true
		}
	}
	return nil, false
}

func (p *Processor) add(h *Handler) error {
	h.Function.Context, h.Function.Processor = p.context, p.name
	h.Stage = p.stage
	if err := h.Function.Validate(); err != nil {
		return err
	}
	if h.Handle == nil {
		return factum.IllegalArgument(fmt.Sprintf("function %s has no handler", h.Function))
	}
	if _, dup := p.Handler(h.Function.Name); dup {
		return factum.IllegalArgument(fmt.Sprintf("function %s is defined twice", h.Function))
	}
	p.handlers = append(p.handlers, h)
	return nil
}

// HandlerOption configures a function added by On or OnStream.
type HandlerOption func(*Handler)

// Named sets the function's name (default "on_" + event name, or the name
// given to OnStream).
func Named(name string) HandlerOption { return func(h *Handler) { h.Function.Name = name } }

// From restricts the function to events from these aggregate types.
func From(aggregates ...factum.NamedAggregate) HandlerOption {
	return func(h *Handler) { h.Aggregates = append(h.Aggregates, aggregates...) }
}

// OnStream adds a function that receives whole streams holding any of the
// events (all events when none are named).
func OnStream(name string, fn StreamFunc, events []string, opts ...HandlerOption) Option {
	return func(p *Processor) error {
		h := &Handler{Function: factum.Function{Name: name}, Events: events, Handle: fn}
		for _, o := range opts {
			o(h)
		}
		return p.add(h)
	}
}

// On adds a function for the event type E, named "on_" + E's message name
// (factum.NameOf: its MessageName method, else its Go name in snake case;
// give stored events a MessageName, so that renaming the Go type does not
// change it). fn runs once per matching event, in stream order.
//
// The definition does not depend on a runtime: the body is decoded with
// the codec registry the processor is bound to (Processor.Bind; the engine
// binds every processor to its registry at New), which applies upcasters;
// a processor that is not bound, or a registry that does not know the
// name, decodes the body straight from JSON into E.
func On[E any](fn func(ctx context.Context, m Message, e E) error, opts ...HandlerOption) Option {
	var zero E
	name := factum.NameOf(zero)
	return func(p *Processor) error {
		h := &Handler{Function: factum.Function{Name: "on_" + name}, Events: []string{name}}
		for _, o := range opts {
			o(h)
		}
		handle := func(reg *codec.Registry) StreamFunc {
			return func(ctx context.Context, s *factum.EventStream) error {
				for i := range s.Events {
					ev := &s.Events[i]
					if !h.Consumes(s.AggregateID.NamedAggregate, ev.Name) {
						continue
					}
					body, err := decode[E](reg, ev)
					if err != nil {
						return &EventError{EventID: ev.ID, Err: err}
					}
					if err := fn(ctx, Message{Stream: s, Event: ev}, body); err != nil {
						return &EventError{EventID: ev.ID, Err: err}
					}
				}
				return nil
			}
		}
		h.Handle = handle(nil)
		h.bind = func(reg *codec.Registry) (StreamFunc, error) {
			if n, _, ok := reg.NameOf(zero); ok && n != name {
				return nil, factum.IllegalArgument(fmt.Sprintf("function %s consumes %T as %q, which the codec registry names %q: give the type a MessageName method returning %q", h.Function, zero, name, n, n))
			}
			return handle(reg), nil
		}
		return p.add(h)
	}
}

// Bind returns a copy of p whose functions added with On decode event
// bodies with reg (upcasting old revisions); p itself is unchanged, so one
// definition may serve several runtimes. It is an IllegalArgument error
// when reg names an event type otherwise than the function that consumes
// it (see On). A nil reg returns p.
func (p *Processor) Bind(reg *codec.Registry) (*Processor, error) {
	if reg == nil {
		return p, nil
	}
	q := *p
	q.handlers = make([]*Handler, len(p.handlers))
	for i, h := range p.handlers {
		b := *h
		if h.bind != nil {
			fn, err := h.bind(reg)
			if err != nil {
				return nil, err
			}
			b.Handle = fn
		}
		q.handlers[i] = &b
	}
	return &q, nil
}

func decode[E any](reg *codec.Registry, ev *factum.DomainEvent) (E, error) {
	var zero E
	if reg != nil && reg.Has(ev.Name) {
		v, err := reg.Decode(ev.Name, ev.Revision, ev.Body)
		if err != nil {
			return zero, err
		}
		e, ok := v.(E)
		if !ok {
			return zero, factum.IllegalState(fmt.Sprintf("event %s decodes to %T, not %T", ev.Name, v, zero))
		}
		return e, nil
	}
	var e E
	if err := json.Unmarshal(ev.Body, &e); err != nil {
		return zero, factum.Errorf(factum.CodeBadRequest, "decode event %s: %w", ev.Name, err)
	}
	return e, nil
}
