package aggregatetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
)

// Spec is the given part of a scenario: an aggregate's history. Build one
// with For, add history with Given or GivenState, and run a command with
// When. A Spec is a value to branch from: When never changes it.
type Spec[S any] struct {
	t       testing.TB
	def     *aggregate.Definition[S]
	reg     *codec.Registry
	id      factum.AggregateID
	base    aggregate.StoredState
	history []given
}

// given is one stream of the history: its events, typed, and their names.
type given struct {
	names  []string
	events []any
}

// For starts a scenario for an aggregate of the definition, with no
// history. The definition's option mistakes fail the test at once.
func For[S any](t testing.TB, def *aggregate.Definition[S]) *Spec[S] {
	t.Helper()
	reg := codec.NewRegistry()
	if err := def.Register(reg); err != nil {
		t.Fatalf("aggregatetest: %v", err)
	}
	id := def.ID("aggregatetest")
	return &Spec[S]{t: t, def: def, reg: reg, id: id, base: aggregate.StoredState{ID: id}}
}

// ForID is For with the aggregate ID the scenario runs on (For uses
// "aggregatetest" in the default tenant), for handlers whose decisions
// depend on their aggregate's identity.
func ForID[S any](t testing.TB, def *aggregate.Definition[S], id factum.AggregateID) *Spec[S] {
	t.Helper()
	s := For(t, def)
	s.id, s.base = id, aggregate.StoredState{ID: id}
	return s
}

// Given returns a copy of s whose history has one more stream holding the
// events, in order. Each Given call is one version.
func (s *Spec[S]) Given(events ...any) *Spec[S] {
	s.t.Helper()
	if len(events) == 0 {
		s.t.Fatalf("aggregatetest: Given needs at least one event")
	}
	g := given{events: events, names: make([]string, len(events))}
	for i, e := range events {
		name, _, ok := s.reg.NameOf(e)
		if !ok {
			s.t.Fatalf("aggregatetest: Given: event %T is not registered with %s (add a Source or Emits)", e, s.def.Named())
		}
		g.names[i] = name
	}
	c := s.clone()
	c.history = append(c.history, g)
	return c
}

// GivenState returns a copy of s that starts from state at version (as a
// snapshot would), with no history after it.
func (s *Spec[S]) GivenState(state S, version int) *Spec[S] {
	s.t.Helper()
	st := aggregate.State[S]{ID: s.id, Version: version, Value: state}
	stored, err := s.def.ToStored(st)
	if err != nil {
		s.t.Fatalf("aggregatetest: GivenState: %v", err)
	}
	c := s.clone()
	c.base = stored
	c.history = nil
	return c
}

func (s *Spec[S]) clone() *Spec[S] {
	c := *s
	c.history = append([]given(nil), s.history...)
	return &c
}

// state rebuilds the state the history describes, fresh for every call so
// that scenarios never share maps or slices.
func (s *Spec[S]) state() aggregate.State[S] {
	s.t.Helper()
	st, err := s.def.FromStored(s.base)
	if err != nil {
		s.t.Fatalf("aggregatetest: %v", err)
	}
	if st.Version == 0 && len(s.history) > 0 {
		st.ID = s.id.WithTenant(factum.DefaultTenant)
	}
	for _, g := range s.history {
		if err := s.def.Apply(&st, st.Version+1, g.names, g.events); err != nil {
			s.t.Fatalf("aggregatetest: applying the given events: %v", err)
		}
	}
	return st
}

// When runs the command with this body against the history, as the
// processor would: the command's name and markers come from the
// definition, and the pre-gates run first.
func (s *Spec[S]) When(body any) *Expect[S] {
	s.t.Helper()
	cmd := factum.NewCommand(s.id, body)
	cmd.AggregateID.Tenant = factum.DefaultTenant
	return s.WhenCommand(cmd)
}

// WhenCommand runs a fully built command (to set an expected version, an
// owner or a tenant). Its aggregate ID is replaced by the scenario's.
func (s *Spec[S]) WhenCommand(cmd factum.Command) *Expect[S] {
	s.t.Helper()
	if cmd.Name == "" {
		cmd.Name = factum.NameOf(cmd.Body)
	}
	if spec, ok := s.def.Command(cmd.Name); ok {
		cmd.IsCreate = cmd.IsCreate || spec.Create
		cmd.AllowCreate = cmd.AllowCreate || spec.AllowCreate
		cmd.IsVoid = cmd.IsVoid || spec.Void
	}
	tenant := cmd.AggregateID.Tenant
	cmd.AggregateID = s.id
	cmd.AggregateID.Tenant = tenant
	if cmd.AggregateID.Tenant == "" {
		cmd.AggregateID.Tenant = factum.DefaultTenant
	}
	st := s.state()
	before := st.Version
	// Bound effects are applied as the processor applies them before an
	// append that here always succeeds, so they stand afterwards.
	events, effs, err := s.def.DecideEffects(context.Background(), &st, &cmd)
	if err == nil && len(effs) > 0 {
		if _, err = aggregate.ApplyEffects(context.Background(), effs); err != nil {
			events = nil
		}
	}
	e := &Expect[S]{t: s.t, spec: s, cmd: cmd, err: err, events: events}
	if err != nil {
		e.after = st
		return e
	}
	e.names = make([]string, len(events))
	for i, ev := range events {
		name, rev, body, encErr := s.reg.Encode(ev)
		if encErr != nil {
			s.t.Fatalf("aggregatetest: command %s returned event %T, which does not encode: %v", cmd.Name, ev, encErr)
		}
		e.names[i] = name
		back, decErr := s.reg.Decode(name, rev, body)
		if decErr != nil {
			s.t.Fatalf("aggregatetest: event %s does not decode from its own encoding %s: %v", name, body, decErr)
		}
		if !reflect.DeepEqual(back, ev) {
			s.t.Errorf("aggregatetest: event %s does not survive its JSON encoding (unexported fields?); the state rebuilt from the store would differ:\n%s", name, Diff(ev, back))
		}
	}
	if st.Version == 0 {
		st.ID = cmd.AggregateID
		st.OwnerID = cmd.OwnerID
	}
	st.EventTime = time.Now()
	if err := s.def.Apply(&st, before+1, e.names, events); err != nil {
		s.t.Fatalf("aggregatetest: applying the command's events: %v", err)
	}
	e.after = st
	return e
}

// Expect holds a command's outcome and checks it. Every method returns the
// same Expect so checks chain; a failed check reports with t.Errorf and a
// diff, so one scenario reports all its mismatches.
type Expect[S any] struct {
	t      testing.TB
	spec   *Spec[S]
	cmd    factum.Command
	events []any
	names  []string
	err    error
	after  aggregate.State[S]
}

// Events checks the events by type and value, in order.
func (e *Expect[S]) Events(want ...any) *Expect[S] {
	e.t.Helper()
	if e.err != nil {
		e.t.Errorf("%s: want events, got error %v", e.cmd.Name, e.err)
		return e
	}
	if !reflect.DeepEqual(e.events, want) {
		e.t.Errorf("%s: events differ (- want, + got):\n%s", e.cmd.Name, Diff(want, e.events))
	}
	return e
}

// EventTypes checks the events' types, in order, ignoring their values;
// pass a zero value of each type.
func (e *Expect[S]) EventTypes(want ...any) *Expect[S] {
	e.t.Helper()
	if e.err != nil {
		e.t.Errorf("%s: want events, got error %v", e.cmd.Name, e.err)
		return e
	}
	got := make([]string, len(e.events))
	for i, ev := range e.events {
		got[i] = fmt.Sprintf("%T", ev)
	}
	exp := make([]string, len(want))
	for i, ev := range want {
		exp[i] = fmt.Sprintf("%T", ev)
	}
	if !reflect.DeepEqual(got, exp) {
		e.t.Errorf("%s: event types differ (- want, + got):\n%s", e.cmd.Name, Diff(exp, got))
	}
	return e
}

// NoError checks that the command was accepted.
func (e *Expect[S]) NoError() *Expect[S] {
	e.t.Helper()
	if e.err != nil {
		e.t.Errorf("%s: unexpected error %v", e.cmd.Name, e.err)
	}
	return e
}

// Error checks that the command was rejected with the code (and appended
// nothing).
func (e *Expect[S]) Error(code factum.Code) *Expect[S] {
	e.t.Helper()
	switch {
	case e.err == nil:
		e.t.Errorf("%s: want error %s, got events:\n%s", e.cmd.Name, code, Diff(nil, e.events))
	case factum.CodeOf(e.err) != code:
		e.t.Errorf("%s: want error %s, got %s (%v)", e.cmd.Name, code, factum.CodeOf(e.err), e.err)
	}
	return e
}

// Err returns the command's error, for checks beyond the code.
func (e *Expect[S]) Err() error { return e.err }

// State checks the state after the command.
func (e *Expect[S]) State(want S) *Expect[S] {
	e.t.Helper()
	if !reflect.DeepEqual(e.after.Value, want) {
		e.t.Errorf("%s: state differs (- want, + got):\n%s", e.cmd.Name, Diff(want, e.after.Value))
	}
	return e
}

// StateMatches runs check on the state after the command.
func (e *Expect[S]) StateMatches(check func(t testing.TB, state S)) *Expect[S] {
	e.t.Helper()
	check(e.t, e.after.Value)
	return e
}

// Version checks the aggregate's version after the command.
func (e *Expect[S]) Version(want int) *Expect[S] {
	e.t.Helper()
	if e.after.Version != want {
		e.t.Errorf("%s: version = %d, want %d", e.cmd.Name, e.after.Version, want)
	}
	return e
}

// Deleted checks the aggregate's deletion mark after the command.
func (e *Expect[S]) Deleted(want bool) *Expect[S] {
	e.t.Helper()
	if e.after.Deleted != want {
		e.t.Errorf("%s: deleted = %v, want %v", e.cmd.Name, e.after.Deleted, want)
	}
	return e
}

// Then returns the scenario as it stands after the command: its history
// plus the command's events (unchanged if it was rejected).
func (e *Expect[S]) Then() *Spec[S] {
	c := e.spec.clone()
	if e.err == nil {
		c.history = append(c.history, given{names: e.names, events: e.events})
	}
	return c
}

// Fork runs fn as a subtest named name, starting from the verified point
// (Then). Branches do not affect each other or the rest of the chain. The
// scenario's t must be a *testing.T.
func (e *Expect[S]) Fork(name string, fn func(t *testing.T, s *Spec[S])) *Expect[S] {
	e.t.Helper()
	tt, ok := e.t.(*testing.T)
	if !ok {
		e.t.Fatalf("aggregatetest: Fork needs a *testing.T")
	}
	next := e.Then()
	tt.Run(name, func(t *testing.T) {
		branch := next.clone()
		branch.t = t
		fn(t, branch)
	})
	return e
}

// jsonOf renders v for a diff: indented JSON with its Go type.
func jsonOf(v any) []string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return []string{fmt.Sprintf("%#v", v)}
	}
	return append([]string{fmt.Sprintf("%T", v)}, splitLines(string(b))...)
}
