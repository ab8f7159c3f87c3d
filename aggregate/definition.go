package aggregate

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
)

// Definition is an aggregate type: a state type S with its sourcing
// functions and command handlers. Build one with New; it is immutable
// afterwards and safe for concurrent use. A Definition implements Type, so a
// runtime can host it next to definitions of other state types.
type Definition[S any] struct {
	named    factum.NamedAggregate
	initial  func() S
	sourcers map[string]sourcer[S]
	handlers map[string]*handler[S]
	// events registers every event type the aggregate may emit.
	events []func(*codec.Registry) error
	// internal marks a type of the framework's own (see Internal).
	internal bool
	// errs collects option mistakes (duplicate handlers, bad names); they
	// are reported by Err and when the definition is registered.
	errs []error
	// unknownFields lets command bodies carry fields the command type
	// does not have (AllowUnknownFields).
	unknownFields bool
	// middleware wraps the processing of the type's commands
	// (WithMiddleware).
	middleware []Middleware
}

// sourcer applies one event type to the state. ok is false when the value is
// not of the function's event type.
type sourcer[S any] struct {
	apply func(s *S, event any) (ok bool)
	typ   reflect.Type
}

// handler decides one command type.
type handler[S any] struct {
	spec     CommandSpec
	decide   func(ctx context.Context, s S, body any) ([]any, error)
	register func(*codec.Registry) error
	// prepare decodes a body as decide would (see prepareBody).
	prepare func(body any) (any, bool)
}

// CommandSpec describes one command an aggregate handles.
type CommandSpec struct {
	// Name is the command name.
	Name string
	// Type is the Go type of the command body.
	Type reflect.Type
	// Create marks a command that creates its aggregate: it is refused for
	// an existing aggregate, and may be sent without an aggregate ID.
	Create bool
	// AllowCreate lets the command create a missing aggregate.
	AllowCreate bool
	// Void marks a fire-and-forget command: only SENT may be awaited.
	Void bool
	// Internal marks a command only the application and the framework
	// send, never a public API (see InternalCommand).
	Internal bool
}

// Option configures a Definition.
type Option[S any] func(*Definition[S])

// CommandOption marks a command handler (see Create, AllowCreate, Void,
// InternalCommand).
type CommandOption func(*CommandSpec)

// Create marks the handler's command as creating its aggregate.
func Create() CommandOption { return func(c *CommandSpec) { c.Create = true } }

// AllowCreate lets the handler's command create a missing aggregate.
func AllowCreate() CommandOption { return func(c *CommandSpec) { c.AllowCreate = true } }

// Void marks the handler's command as fire-and-forget.
func Void() CommandOption { return func(c *CommandSpec) { c.Void = true } }

// New defines the aggregate type named name in the bounded context. Options
// add sourcing functions (Source), command handlers (Handle), event types
// without a sourcing function (Emits) and the initial state (Initial).
// Mistakes in the options (an invalid name, two handlers for one command)
// are kept and reported by Err and by registration, so New itself can be
// used in a package-level var.
//
// Every aggregate also handles the built-in DeleteAggregate and
// RecoverAggregate commands.
func New[S any](context, name string, opts ...Option[S]) *Definition[S] {
	d := &Definition[S]{
		named:    factum.NamedAggregate{Context: context, Aggregate: name},
		sourcers: make(map[string]sourcer[S]),
		handlers: make(map[string]*handler[S]),
	}
	if err := d.named.Validate(); err != nil {
		d.errs = append(d.errs, err)
	}
	for _, o := range opts {
		o(d)
	}
	d.addBuiltins()
	return d
}

// Initial sets the function that makes the state of a new aggregate, for
// state types whose zero value is not ready to use (maps, say). It is also
// the base a snapshot's JSON is decoded into.
func Initial[S any](fn func() S) Option[S] {
	return func(d *Definition[S]) { d.initial = fn }
}

// Source registers fn as the sourcing function of event type E: it applies
// one event to the state. It must be deterministic and do no I/O; it runs
// when a command's events are appended and when the aggregate is loaded.
func Source[S, E any](fn func(*S, E)) Option[S] {
	return func(d *Definition[S]) {
		name := eventName[E]()
		if err := factum.ValidateName("event", name); err != nil {
			d.errs = append(d.errs, err)
			return
		}
		if _, dup := d.sourcers[name]; dup {
			d.errs = append(d.errs, factum.IllegalArgument(fmt.Sprintf("aggregate %s: two sourcing functions for event %s", d.named, name)))
			return
		}
		d.sourcers[name] = sourcer[S]{
			typ: reflect.TypeFor[E](),
			apply: func(s *S, event any) bool {
				e, ok := event.(E)
				if ok {
					fn(s, e)
				}
				return ok
			},
		}
		d.events = append(d.events, func(r *codec.Registry) error { return codec.Register[E](r) })
	}
}

// Emits declares event type E, which handlers return but which changes no
// state, so that it can be encoded into streams.
func Emits[S, E any]() Option[S] {
	return func(d *Definition[S]) {
		d.events = append(d.events, func(r *codec.Registry) error { return codec.Register[E](r) })
	}
}

// Handle registers fn as the handler of command type C. It receives the
// current state by value and returns the events that record its decision,
// or an error that rejects the command (use factum.IllegalState for broken
// business rules, factum.IllegalArgument for bad input). It must not modify
// the state: maps and slices inside it are shared with the cached state.
// Dependencies come in by closure. opts mark the command (Create,
// AllowCreate, Void).
func Handle[S, C any](fn func(ctx context.Context, state S, cmd C) ([]any, error), opts ...CommandOption) Option[S] {
	return func(d *Definition[S]) {
		var zero C
		spec := CommandSpec{Name: factum.NameOf(zero), Type: reflect.TypeFor[C]()}
		if spec.Name == "" {
			spec.Name = factum.SnakeCase(spec.Type.Name())
		}
		for _, o := range opts {
			o(&spec)
		}
		if err := factum.ValidateName("command", spec.Name); err != nil {
			d.errs = append(d.errs, err)
			return
		}
		if _, dup := d.handlers[spec.Name]; dup {
			d.errs = append(d.errs, factum.IllegalArgument(fmt.Sprintf("aggregate %s: two handlers for command %s", d.named, spec.Name)))
			return
		}
		d.handlers[spec.Name] = &handler[S]{
			spec: spec,
			decide: func(ctx context.Context, s S, body any) ([]any, error) {
				c, err := bodyAs[C](spec.Name, body)
				if err != nil {
					return nil, err
				}
				return fn(ctx, s, c)
			},
			register: func(r *codec.Registry) error { return codec.Register[C](r) },
			prepare:  prepareBody[C],
		}
	}
}

// bodyAs converts a command body to C: the value itself, a pointer to it, or
// its JSON encoding (a command that crossed a process boundary).
func bodyAs[C any](name string, body any) (C, error) {
	var c C
	switch b := body.(type) {
	case C:
		return b, nil
	case *C:
		if b != nil {
			return *b, nil
		}
	case json.RawMessage:
		if err := json.Unmarshal(b, &c); err != nil {
			return c, factum.Errorf(factum.CodeBadRequest, "command %s: body is not valid JSON for %v: %w", name, reflect.TypeFor[C](), err)
		}
		return c, nil
	case []byte:
		return bodyAs[C](name, json.RawMessage(b))
	}
	return c, factum.IllegalArgument(fmt.Sprintf("command %s: body is %T, want %v", name, body, reflect.TypeFor[C]()))
}

// prepareBody decodes a body that is C's JSON into C, as bodyAs does,
// ahead of the command's processing (see processor.Prepare): it returns
// the value and true, or false when the body is not JSON (a value, a
// pointer to one), or does not decode into C, or decoding panics, so that
// bodyAs meets it as it was and refuses it as it would have.
func prepareBody[C any](body any) (v any, ok bool) {
	var raw []byte
	switch b := body.(type) {
	case C, *C:
		return nil, false
	case json.RawMessage:
		raw = b
	case []byte:
		raw = b
	default:
		return nil, false
	}
	defer func() {
		// A type's UnmarshalJSON may panic: it panics again in decide,
		// which refuses the command for it.
		if recover() != nil {
			v, ok = nil, false
		}
	}()
	var c C
	if json.Unmarshal(raw, &c) != nil {
		return nil, false
	}
	// An interface C decoded from null is nil, which bodyAs would not
	// take as a C: the body stays JSON.
	if v = c; v == nil {
		return nil, false
	}
	return v, true
}

func eventName[E any]() string {
	var zero E
	if n := factum.NameOf(zero); n != "" {
		return n
	}
	return factum.SnakeCase(reflect.TypeFor[E]().Name())
}

// Named returns the aggregate type's name.
func (d *Definition[S]) Named() factum.NamedAggregate { return d.named }

// ID returns the identity of the aggregate id of this type in the default
// tenant.
func (d *Definition[S]) ID(id string) factum.AggregateID { return d.named.WithID(id) }

// Err reports the mistakes made in the options given to New, if any.
func (d *Definition[S]) Err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return factum.Errorf(factum.CodeIllegalArgument, "aggregate %s: %w", d.named, joinErrs(d.errs))
}

// Command returns the spec of the command name, if the aggregate handles it.
func (d *Definition[S]) Command(name string) (CommandSpec, bool) {
	h, ok := d.handlers[name]
	if !ok {
		return CommandSpec{}, false
	}
	return h.spec, true
}

// Commands returns the specs of every command the aggregate handles, sorted
// by name.
func (d *Definition[S]) Commands() []CommandSpec {
	out := make([]CommandSpec, 0, len(d.handlers))
	for _, h := range d.handlers {
		out = append(out, h.spec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SourcedEvents returns the names of the events that have a sourcing
// function, sorted.
func (d *Definition[S]) SourcedEvents() []string {
	out := make([]string, 0, len(d.sourcers))
	for n := range d.sourcers {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Register adds the aggregate's command and event types to r. It reports
// the definition's option mistakes and name clashes in r.
func (d *Definition[S]) Register(r *codec.Registry) error {
	if err := d.Err(); err != nil {
		return err
	}
	for _, h := range d.handlers {
		if err := h.register(r); err != nil {
			return fmt.Errorf("aggregate %s: command %s: %w", d.named, h.spec.Name, err)
		}
	}
	for _, reg := range d.events {
		if err := reg(r); err != nil {
			return fmt.Errorf("aggregate %s: %w", d.named, err)
		}
	}
	return nil
}

// NewState returns the state of a new aggregate: Initial's value, or the
// zero S.
func (d *Definition[S]) NewState() S {
	if d.initial != nil {
		return d.initial()
	}
	var s S
	return s
}

func joinErrs(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return fmt.Errorf("%d mistakes: %v", len(errs), errs)
}
