package nats

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
	natsgo "github.com/nats-io/nats.go"
)

// prepareProbe wraps the aggregate executor: it counts the Prepare calls
// each command gets and records the body each finds in Process, which
// runs in the command's lane.
type prepareProbe struct {
	next     aggregate.Executor
	mu       sync.Mutex
	prepared map[string]int // by request ID
	bodies   map[string]any // by request ID, as Process found them
}

func (p *prepareProbe) Prepare(cmd *factum.Command) {
	p.mu.Lock()
	p.prepared[cmd.RequestIDOrID()]++
	p.mu.Unlock()
	p.next.(Preparer).Prepare(cmd)
}

func (p *prepareProbe) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	p.mu.Lock()
	p.bodies[cmd.RequestIDOrID()] = cmd.Body
	p.mu.Unlock()
	return p.next.Process(ctx, cmd)
}

// preparedCase is a command delivered from the stream and what its
// executor finds.
type preparedCase struct {
	req   string
	named factum.NamedAggregate
	name  string
	body  string
	typed any         // the body Process finds; nil: the JSON sent
	code  factum.Code // the signal's
}

// A command delivered from the stream, alone or in a batch, reaches its
// lane with its body decoded (Prepare, once per command, through the
// origin wrapper), and its handler with the value sent; a body that does
// not decode, and a command of a name or aggregate type the executor does
// not handle, reach it as JSON and are refused as unprepared: the same
// code and message.
func TestDeliveredBodiesAreDecodedBeforeTheLane(t *testing.T) {
	tallyT := tallyType("shop")
	reg, err := aggregate.NewRegistry(tallyT)
	if err != nil {
		t.Fatal(err)
	}
	exec, err := reg.NewExecutor(aggregate.ExecutorConfig{Store: eventstore.NewMemory(), Codec: codec.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	probe := &prepareProbe{next: exec, prepared: map[string]int{}, bodies: map[string]any{}}
	w := inProcessWorld(t, 2, 3*time.Second)
	n := w.node(t, "a", BusConfig{Local: LocalNever})
	signals := make(chan factum.Signal, 16)
	bus := n.startBus(t, originExecutor(probe, originHeader{}), sigSink(signals))

	tallyN := tallyT.Named()
	otherN := factum.NamedAggregate{Context: "shop", Aggregate: "other"}
	cmdOf := func(id string, c preparedCase) *factum.Command {
		cmd := factum.NewCommand(c.named.WithID(id).WithTenant(factum.DefaultTenant), json.RawMessage(c.body))
		cmd.Name, cmd.RequestID, cmd.AllowCreate = c.name, c.req, true
		return &cmd
	}
	put := func(t *testing.T, id string, cases ...preparedCase) {
		t.Helper()
		cmds := make([]*factum.Command, len(cases))
		for i, c := range cases {
			cmds[i] = cmdOf(id, c)
		}
		part := PartitionOf(id, len(bus.state))
		var msg *natsgo.Msg
		if len(cmds) == 1 {
			var err error
			if msg, err = encodeCommand(w.prefix, cmds[0], part); err != nil {
				t.Fatal(err)
			}
		} else {
			msg = bus.batchMsg(sends(t, cmds), part)
		}
		if _, err := bus.put(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	bad := []preparedCase{
		{name: "add_n", body: `{"N":"x"}`, code: factum.CodeBadRequest},
		{name: "add_n", body: `"two"`, code: factum.CodeBadRequest},
		{name: "add_x", body: `{"N":1}`, code: factum.CodeIllegalArgument},
	}
	for _, tc := range []struct {
		name  string
		batch bool
		cases []preparedCase
	}{
		{"one", false, []preparedCase{{req: "one", name: "add_n", body: `{"N":2}`, typed: addN{N: 2}, code: factum.CodeOk}}},
		{"a body that does not decode", false, []preparedCase{bad[0]}},
		{"a body of another JSON type", false, []preparedCase{bad[1]}},
		{"an unknown command", false, []preparedCase{bad[2]}},
		{"an unknown aggregate type", false, []preparedCase{{name: "add_n", body: `{"N":1}`, code: factum.CodeNotFound}}},
		{"a batch", true, []preparedCase{
			{name: "add_n", body: `{"N":3}`, typed: addN{N: 3}, code: factum.CodeOk},
			bad[0], bad[2],
			{name: "add_n", body: `{"N":4}`, typed: addN{N: 4}, code: factum.CodeOk},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "prep-" + factum.NewID()
			cases := make([]preparedCase, len(tc.cases))
			for i, c := range tc.cases {
				c.req = fmt.Sprintf("%s-%d", id, i)
				if c.named == (factum.NamedAggregate{}) {
					c.named = tallyN
				}
				if tc.name == "an unknown aggregate type" {
					c.named = otherN
				}
				cases[i] = c
			}
			// What the executor answers each refused command unprepared,
			// on an aggregate of its own.
			want := map[string]factum.Signal{}
			for _, c := range cases {
				if c.code != factum.CodeOk {
					want[c.req] = exec.Process(context.Background(), cmdOf(id+"-plain", c))
				}
			}
			if tc.batch {
				put(t, id, cases...)
			} else {
				for _, c := range cases {
					put(t, id, c)
				}
			}
			got := map[string]factum.Signal{}
			for range cases {
				select {
				case s := <-signals:
					got[s.RequestID] = s
				case <-time.After(10 * time.Second):
					t.Fatalf("signals %v, want %d", got, len(cases))
				}
			}
			probe.mu.Lock()
			defer probe.mu.Unlock()
			for _, c := range cases {
				s := got[c.req]
				if s.Code != c.code {
					t.Errorf("%s: %s %q, want %s", c.req, s.Code, s.Message, c.code)
				}
				if w, ok := want[c.req]; ok && (s.Code != w.Code || s.Message != w.Message) {
					t.Errorf("%s: %s %q; unprepared: %s %q", c.req, s.Code, s.Message, w.Code, w.Message)
				}
				if k := probe.prepared[c.req]; k != 1 {
					t.Errorf("%s prepared %d times, want once", c.req, k)
				}
				wantBody := c.typed
				if wantBody == nil {
					wantBody = json.RawMessage(c.body)
				}
				if body := probe.bodies[c.req]; !reflect.DeepEqual(body, wantBody) {
					t.Errorf("%s: the lane found the body %#v (%T), want %#v (%T)", c.req, body, body, wantBody, wantBody)
				}
			}
		})
	}
}

// prepExec is an executor that prepares: it records the commands it is
// asked to.
type prepExec struct {
	*plainExec
	prepared []string
}

func (p *prepExec) Prepare(cmd *factum.Command) { p.prepared = append(p.prepared, cmd.ID) }

type prepForgetExec struct{ *prepExec }

func (prepForgetExec) Forget(factum.AggregateID) {}

type prepRunsExec struct {
	*prepExec
	runsExec
}

func (r prepRunsExec) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	return r.prepExec.Process(ctx, cmd)
}

type prepForgetRunsExec struct{ prepRunsExec }

func (prepForgetRunsExec) Forget(factum.AggregateID) {}

// Signals.Bus's executor, whichever wrapper it is, passes Prepare on to
// the executor it wraps, and does nothing for one that does not prepare.
func TestOriginExecutorPassesPrepareOn(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(*prepExec) command.Executor
	}{
		{"plain", func(p *prepExec) command.Executor { return p }},
		{"forgets", func(p *prepExec) command.Executor { return prepForgetExec{p} }},
		{"runs", func(p *prepExec) command.Executor { return prepRunsExec{p, runsExec{p.plainExec, true}} }},
		{"forgets runs", func(p *prepExec) command.Executor {
			return prepForgetRunsExec{prepRunsExec{p, runsExec{p.plainExec, true}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prepExec{plainExec: &plainExec{}}
			exec := originExecutor(tc.make(p), originHeader{})
			prep, ok := exec.(Preparer)
			if !ok {
				t.Fatalf("%T is no Preparer", exec)
			}
			prep.Prepare(&factum.Command{ID: "c1"})
			if fmt.Sprint(p.prepared) != "[c1]" {
				t.Errorf("prepared %v, want [c1]", p.prepared)
			}
		})
	}
	t.Run("an executor that does not prepare", func(t *testing.T) {
		body := json.RawMessage(`{}`)
		cmd := &factum.Command{ID: "c1", Body: body}
		originExecutor(&plainExec{}, originHeader{}).(Preparer).Prepare(cmd)
		if !reflect.DeepEqual(cmd.Body, body) {
			t.Errorf("body %#v, want %#v", cmd.Body, body)
		}
	})
}
