package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/memory"
)

// journal records the lifecycle calls of the test components, in order.
type journal struct {
	mu    sync.Mutex
	lines []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, fmt.Sprintf(format, args...))
}

func (j *journal) get() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.lines...)
}

// probe is a component that records its lifecycle; its Run sends a
// command through the gateway after it is cancelled, which must still be
// admitted (components stop before the gateway closes).
type probe struct {
	name      string
	j         *journal
	env       engine.Env
	parts     engine.Parts
	failSetup error
	failAt    error
	eng       *engine.Engine
	running   chan struct{}
	lastSend  error
}

func (p *probe) Setup(env engine.Env) (engine.Parts, error) {
	p.j.add("setup %s", p.name)
	p.env = env
	return p.parts, p.failSetup
}

func (p *probe) Attach(e *engine.Engine) error {
	p.j.add("attach %s", p.name)
	p.eng = e
	return p.failAt
}

func (p *probe) Run(ctx context.Context) error {
	p.j.add("run %s", p.name)
	close(p.running)
	<-ctx.Done()
	// The work in hand at cancellation: one more command.
	id := factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "test", Aggregate: "counter"}, ID: "by-" + p.name}
	_, p.lastSend = p.eng.Gateway().SendAndWait(context.Background(), factum.NewCommand(id, Add{N: 1}), command.Wait(factum.StageProcessed))
	p.j.add("stopped %s", p.name)
	return nil
}

func newProbe(name string, j *journal) *probe {
	return &probe{name: name, j: j, running: make(chan struct{})}
}

func TestComponentsRunInOrderAndStopInReverseBeforeTheGatewayCloses(t *testing.T) {
	j := &journal{}
	a, b := newProbe("a", j), newProbe("b", j)
	db := memory.New()
	rt, err := engine.New(engine.Config{Storage: db, Components: []engine.Component{a, b}}, counterType(nil))
	if err != nil {
		t.Fatal(err)
	}
	if a.env.Context != "test" || a.env.Store == nil || a.env.Snapshots == nil || a.env.Codec == nil {
		t.Fatalf("Setup's Env is incomplete: %+v", a.env)
	}
	if got := j.get(); fmt.Sprint(got) != "[setup a setup b attach a attach b]" {
		t.Fatalf("at New: %v", got)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-a.running
	<-b.running
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	got := j.get()
	want := "[run a run b stopped b stopped a]"
	if fmt.Sprint(got[4:]) != want && fmt.Sprint(got[4:]) != "[run b run a stopped b stopped a]" {
		t.Fatalf("lifecycle %v, want runs then %s", got, want)
	}
	for _, p := range []*probe{a, b} {
		if p.lastSend != nil {
			t.Fatalf("%s's command sent while it stopped was refused: %v", p.name, p.lastSend)
		}
	}
}

func TestAComponentFailingAtSetupOrAttachFailsNew(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		mod  func(*probe)
	}{
		{"setup", func(p *probe) { p.failSetup = boom }},
		{"attach", func(p *probe) { p.failAt = boom }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe("p", &journal{})
			tc.mod(p)
			if _, err := engine.New(engine.Config{Storage: memory.New(), Components: []engine.Component{p}}, counterType(nil)); !errors.Is(err, boom) {
				t.Fatalf("New = %v, want the component's error", err)
			}
		})
	}
	if _, err := engine.New(engine.Config{Storage: memory.New(), Components: []engine.Component{nil}}, counterType(nil)); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("a nil component: %v, want IllegalArgument", err)
	}
}

type nopRecorder struct{}

func (nopRecorder) RecordFailure(context.Context, event.Failure) error { return nil }

// What a component brings joins the engine: its aggregate types are
// served, its processors run; two failure recorders are refused.
func TestAComponentsPartsJoinTheEngine(t *testing.T) {
	ctx := t.Context()
	handled := make(chan string, 16)
	proc := event.MustProcessor("test", "probe", factum.StageProjected,
		event.OnStream("count", func(_ context.Context, s *factum.EventStream) error { handled <- s.AggregateID.ID; return nil }, nil))
	extra := aggregate.New[Counter]("test", "extra",
		aggregate.Source(func(c *Counter, e Added) { c.Total += e.N }),
		aggregate.Handle(func(_ context.Context, _ Counter, a Add) ([]any, error) { return []any{Added(a)}, nil }, aggregate.AllowCreate()))
	p := newProbe("p", &journal{})
	p.parts = engine.Parts{Types: []aggregate.Type{extra}, Processors: []*event.Processor{proc}, Failures: nopRecorder{}}
	rt, err := engine.New(engine.Config{Storage: memory.New(), Components: []engine.Component{p}}, counterType(nil))
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Run(t, rt)
	if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(extra.ID("x1"), Add{N: 1}), command.Wait(factum.StageProcessed)); err != nil {
		t.Fatalf("the component's aggregate type is not served: %v", err)
	}
	select {
	case id := <-handled:
		if id != "x1" {
			t.Fatalf("handled %s", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the component's processor did not run")
	}
	q := newProbe("q", &journal{})
	q.parts = engine.Parts{Failures: nopRecorder{}}
	_, err = engine.New(engine.Config{Storage: memory.New(), Failures: nopRecorder{}, Components: []engine.Component{q}}, counterType(nil))
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("two failure recorders: %v, want IllegalArgument", err)
	}
}

// A component's Consumers join the engine's function registry: a
// PROJECTED wait expects the signals of the registry's processors and of
// the component's functions, and Failures returns the component's
// recorder.
func TestAComponentsConsumersJoinTheWait(t *testing.T) {
	handled := make(chan struct{}, 16)
	proc := event.MustProcessor("test", "probe", factum.StageProjected,
		event.OnStream("count", func(context.Context, *factum.EventStream) error { handled <- struct{}{}; return nil }, nil))
	own := factum.Function{Context: "test", Processor: "own", Name: "project"}
	p := newProbe("p", &journal{})
	p.parts = engine.Parts{Failures: nopRecorder{},
		Consumers: &consumers{fns: map[factum.CommandStage][]factum.Function{factum.StageProjected: {own}}}}
	rt, err := engine.New(engine.Config{Storage: memory.New(), Processors: []*event.Processor{proc}, Components: []engine.Component{p}}, counterType(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rt.Failures().(nopRecorder); !ok {
		t.Fatalf("Failures() = %T, want the component's recorder", rt.Failures())
	}
	enginetest.Run(t, rt)
	cmd := factum.NewCommand(factum.NamedAggregate{Context: "test", Aggregate: "counter"}.WithID("j1"), Add{N: 1})
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := rt.Gateway().SendAndWait(ctx, cmd, command.Wait(factum.StageProjected))
		done <- err
	}()
	select {
	case <-handled:
	case <-time.After(10 * time.Second):
		t.Fatal("the processor did not run")
	}
	select {
	case err := <-done:
		t.Fatalf("the wait returned (%v) before the component's function signalled", err)
	case <-time.After(200 * time.Millisecond):
	}
	rt.Signals().Signal(factum.Signal{CommandID: cmd.ID, RequestID: cmd.RequestID, Stage: factum.StageProjected, Function: own,
		AggregateID: cmd.AggregateID, AggregateVersion: 1, Code: factum.CodeOk, SignalTime: time.Now()})
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not return after both functions signalled")
	}
}
