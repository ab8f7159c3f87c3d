package sagatest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/saga"
)

// Spec is a saga under test.
type Spec struct {
	t      testing.TB
	saga   *saga.Saga
	codec  *codec.Registry
	source factum.AggregateID
}

// For starts a spec of s. Events come from an aggregate "test.source" in
// the default tenant unless From says otherwise.
func For(t testing.TB, s *saga.Saga) *Spec {
	t.Helper()
	return &Spec{t: t, saga: s, source: factum.NamedAggregate{Context: "test", Aggregate: "source"}.WithID("source-1")}
}

// WithCodec decodes events with reg (for upcasters and registered names).
func (s *Spec) WithCodec(reg *codec.Registry) *Spec {
	s.codec = reg
	return s
}

// From sets the aggregate the events come from (its tenant is carried to
// the commands).
func (s *Spec) From(id factum.AggregateID) *Spec {
	s.source = id
	return s
}

// capture is a Sender that records commands.
type capture struct {
	mu   sync.Mutex
	cmds []factum.Command
	fail error
}

func (c *capture) SendAndWait(ctx context.Context, cmd factum.Command, _ command.WaitPlan) (command.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return command.Result{}, c.fail
	}
	c.cmds = append(c.cmds, cmd)
	return command.Result{Stage: factum.StageProcessed, CommandID: cmd.ID, RequestID: cmd.RequestID, AggregateID: cmd.AggregateID, Code: factum.CodeOk}, nil
}

// Outcome is what the saga did with one event.
type Outcome struct {
	t testing.TB
	// Commands are the commands sent, prepared (request IDs, tenant).
	Commands []factum.Command
	// Err is the saga's error, if any.
	Err error
	// Event is the event delivered.
	Event factum.DomainEvent
}

// When delivers an event with the body to every function of the saga that
// consumes it, and records the commands they send.
func (s *Spec) When(body any) *Outcome {
	s.t.Helper()
	name := factum.NameOf(body)
	rev := 0
	if s.codec != nil {
		if n, r, ok := s.codec.NameOf(body); ok {
			name, rev = n, r
		}
	}
	b, err := json.Marshal(body)
	if err != nil {
		s.t.Fatalf("sagatest: encode %T: %v", body, err)
	}
	stream := &factum.EventStream{
		ID: factum.NewID(), AggregateID: s.source, Version: 1, CommandID: factum.NewID(), RequestID: factum.NewID(),
		CreateTime: time.Now(),
		Events:     []factum.DomainEvent{{ID: factum.NewID(), Name: name, Revision: rev, Sequence: 1, IsLast: true, Body: b}},
	}
	send := &capture{}
	p, err := s.saga.Processor(s.codec, send)
	if err != nil {
		s.t.Fatalf("sagatest: %v", err)
	}
	out := &Outcome{t: s.t, Event: stream.Events[0]}
	for _, h := range p.Handlers() {
		if !h.Consumes(stream.AggregateID.NamedAggregate, name) {
			continue
		}
		if err := event.Invoke(context.Background(), h, stream, time.Minute); err != nil {
			out.Err = err
			break
		}
	}
	out.Commands = send.cmds
	return out
}

// ExpectCommands fails the test unless the saga sent exactly these command
// bodies, in order, compared by type and value.
func (o *Outcome) ExpectCommands(bodies ...any) *Outcome {
	o.t.Helper()
	if o.Err != nil {
		o.t.Fatalf("saga failed: %v", o.Err)
	}
	if len(o.Commands) != len(bodies) {
		o.t.Fatalf("saga sent %d commands, want %d:\n%s", len(o.Commands), len(bodies), describe(o.Commands))
	}
	for i, want := range bodies {
		got := o.Commands[i].Body
		if reflect.TypeOf(got) != reflect.TypeOf(want) {
			o.t.Fatalf("command %d is %T, want %T", i, got, want)
		}
		if !reflect.DeepEqual(got, want) {
			o.t.Fatalf("command %d:\n got  %+v\n want %+v", i, got, want)
		}
	}
	return o
}

// ExpectNone fails the test unless the saga succeeded and sent nothing.
func (o *Outcome) ExpectNone() *Outcome {
	o.t.Helper()
	if o.Err != nil {
		o.t.Fatalf("saga failed: %v", o.Err)
	}
	if len(o.Commands) != 0 {
		o.t.Fatalf("saga sent %d commands, want none:\n%s", len(o.Commands), describe(o.Commands))
	}
	return o
}

// ExpectError fails the test unless the saga failed with the code.
func (o *Outcome) ExpectError(code factum.Code) *Outcome {
	o.t.Helper()
	if o.Err == nil {
		o.t.Fatalf("saga succeeded, want error %s", code)
	}
	if got := factum.CodeOf(o.Err); got != code {
		o.t.Fatalf("saga failed with %s (%v), want %s", got, o.Err, code)
	}
	return o
}

// ExpectTargets fails the test unless the commands go to these aggregates,
// in order.
func (o *Outcome) ExpectTargets(ids ...factum.AggregateID) *Outcome {
	o.t.Helper()
	if len(o.Commands) != len(ids) {
		o.t.Fatalf("saga sent %d commands, want %d", len(o.Commands), len(ids))
	}
	for i, id := range ids {
		if got := o.Commands[i].AggregateID; got != id {
			o.t.Fatalf("command %d goes to %v, want %v", i, got, id)
		}
	}
	return o
}

func describe(cmds []factum.Command) string {
	s := ""
	for i, c := range cmds {
		s += fmt.Sprintf("  %d: %s %+v -> %v\n", i, c.Name, c.Body, c.AggregateID)
	}
	return s
}
