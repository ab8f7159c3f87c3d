package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/factum-go/factum"
)

// UnknownTypeError reports a message name that no registered type carries.
type UnknownTypeError struct {
	// Name is the unknown message name.
	Name string
}

func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("codec: unknown message type %q", e.Name)
}

// Is makes errors.Is(err, factum.ErrNotFound) true for an unknown type.
func (e *UnknownTypeError) Is(target error) bool { return target == factum.ErrNotFound }

// Upcaster rewrites a body from one revision to the next.
type Upcaster func(body json.RawMessage) (json.RawMessage, error)

// entry is one registered type.
type entry struct {
	name     string
	revision int
	typ      reflect.Type
	decode   func([]byte) (any, error)
}

// Registry maps message names to Go types. It is safe for concurrent use;
// registration usually happens once at start-up.
type Registry struct {
	mu        sync.RWMutex
	byName    map[string]*entry
	byType    map[reflect.Type]*entry
	upcasters map[upcastKey]Upcaster
}

type upcastKey struct {
	name string
	from int
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		byName:    make(map[string]*entry),
		byType:    make(map[reflect.Type]*entry),
		upcasters: make(map[upcastKey]Upcaster),
	}
}

// Option configures one registration.
type Option func(*entry)

// Name sets the message name instead of the default (factum.NameOf).
func Name(name string) Option { return func(e *entry) { e.name = name } }

// Revision sets the current schema revision of the type (default 0).
func Revision(rev int) Option { return func(e *entry) { e.revision = rev } }

// Register adds T to r under its default name or the one given by Name.
// Registering the same type again with the same name and revision is a
// no-op; a name already taken by another type, or one type under two names,
// is an IllegalArgument error.
func Register[T any](r *Registry, opts ...Option) error {
	var zero T
	typ := reflect.TypeFor[T]()
	e := &entry{name: factum.NameOf(zero), typ: typ}
	if e.name == "" {
		e.name = factum.SnakeCase(typ.Name())
	}
	for _, o := range opts {
		o(e)
	}
	if err := factum.ValidateName("message", e.name); err != nil {
		return err
	}
	if e.revision < 0 {
		return factum.IllegalArgument(fmt.Sprintf("codec: %s: negative revision", e.name))
	}
	e.decode = func(b []byte) (any, error) {
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
		return v, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.byName[e.name]; ok {
		if old.typ == typ && old.revision == e.revision {
			return nil
		}
		return factum.IllegalArgument(fmt.Sprintf("codec: name %q is already registered for %v (revision %d)", e.name, old.typ, old.revision))
	}
	if old, ok := r.byType[typ]; ok {
		return factum.IllegalArgument(fmt.Sprintf("codec: type %v is already registered as %q", typ, old.name))
	}
	r.byName[e.name] = e
	r.byType[typ] = e
	return nil
}

// MustRegister is Register that panics on error, for package-level set-up of
// fixed types.
func MustRegister[T any](r *Registry, opts ...Option) {
	if err := Register[T](r, opts...); err != nil {
		panic(err)
	}
}

// AddUpcaster registers up to rewrite bodies of name at revision from to
// revision from+1. It is an IllegalArgument error to register two for the
// same (name, from).
func (r *Registry) AddUpcaster(name string, from int, up Upcaster) error {
	if up == nil || from < 0 {
		return factum.IllegalArgument("codec: upcaster needs a function and a revision >= 0")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := upcastKey{name, from}
	if _, ok := r.upcasters[k]; ok {
		return factum.IllegalArgument(fmt.Sprintf("codec: upcaster for %s revision %d already registered", name, from))
	}
	r.upcasters[k] = up
	return nil
}

// NameOf returns the registered name and revision of v's type.
func (r *Registry) NameOf(v any) (name string, revision int, ok bool) {
	t := reflect.TypeOf(v)
	r.mu.RLock()
	e, ok := r.byType[t]
	r.mu.RUnlock()
	if !ok {
		return "", 0, false
	}
	return e.name, e.revision, true
}

// Has reports whether name is registered.
func (r *Registry) Has(name string) bool {
	r.mu.RLock()
	_, ok := r.byName[name]
	r.mu.RUnlock()
	return ok
}

// TypeOf returns the Go type registered under name.
func (r *Registry) TypeOf(name string) (reflect.Type, bool) {
	r.mu.RLock()
	e, ok := r.byName[name]
	r.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return e.typ, true
}

// Names returns every registered name.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	return out
}

// Encode returns v's registered name, revision and JSON body. An
// unregistered type is an *UnknownTypeError naming its default name.
func (r *Registry) Encode(v any) (name string, revision int, body json.RawMessage, err error) {
	name, revision, ok := r.NameOf(v)
	if !ok {
		return "", 0, nil, &UnknownTypeError{Name: factum.NameOf(v)}
	}
	body, err = json.Marshal(v)
	if err != nil {
		return "", 0, nil, fmt.Errorf("codec: encode %s: %w", name, err)
	}
	return name, revision, body, nil
}

// Decode returns the value of the type registered under name, upcasting
// body from revision to the current one first. An unknown name is an
// *UnknownTypeError; a body stored at a newer revision than the registered
// one, or a missing upcaster, is an IllegalState error.
func (r *Registry) Decode(name string, revision int, body []byte) (any, error) {
	r.mu.RLock()
	e, ok := r.byName[name]
	r.mu.RUnlock()
	if !ok {
		return nil, &UnknownTypeError{Name: name}
	}
	if revision > e.revision {
		return nil, factum.IllegalState(fmt.Sprintf("codec: %s body is at revision %d, newer than the registered %d", name, revision, e.revision))
	}
	for rev := revision; rev < e.revision; rev++ {
		r.mu.RLock()
		up, ok := r.upcasters[upcastKey{name, rev}]
		r.mu.RUnlock()
		if !ok {
			return nil, factum.IllegalState(fmt.Sprintf("codec: no upcaster for %s from revision %d", name, rev))
		}
		var err error
		if body, err = up(body); err != nil {
			return nil, fmt.Errorf("codec: upcast %s from revision %d: %w", name, rev, err)
		}
	}
	v, err := e.decode(body)
	if err != nil {
		var fe *factum.Error
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, factum.Errorf(factum.CodeBadRequest, "codec: decode %s: %w", name, err)
	}
	return v, nil
}
