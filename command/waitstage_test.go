package command_test

import (
	"context"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/eventstore"
)

// What a wait uses: nothing at SENT, PROCESSED alone at PROCESSED,
// everything at a branch stage (a stream yields every branch signal on
// its way) and for a wait or a signal of no known stage.
func TestWaitUses(t *testing.T) {
	branches := []factum.CommandStage{factum.StageSnapshot, factum.StageProjected, factum.StageEventHandled, factum.StageSagaHandled}
	for _, wait := range append([]factum.CommandStage{0, 9}, factum.Stages...) {
		for _, stage := range append([]factum.CommandStage{0, 9}, factum.Stages...) {
			want := true
			switch {
			case !wait.Valid() || !stage.Valid():
			case wait == factum.StageSent:
				want = false
			case wait == factum.StageProcessed:
				want = stage == factum.StageSent || stage == factum.StageProcessed
			}
			if got := command.WaitUses(wait, stage); got != want {
				t.Errorf("a wait for %v uses a %v signal: %v, want %v", wait, stage, got, want)
			}
		}
	}
	for _, b := range branches {
		if command.WaitUses(factum.StageProcessed, b) {
			t.Errorf("a wait for PROCESSED uses %v", b)
		}
	}
}

// A context carries a send's wait stage for that command alone, through
// the contexts derived from it, and keeps its parent's values and
// cancellation.
func TestWaitStageIsTheCommands(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	ctx := command.WithWaitStage(parent, "c-1", factum.StageProjected)
	derived, stop := context.WithTimeout(ctx, time.Hour)
	defer stop()
	for name, c := range map[string]context.Context{"its own": ctx, "derived": derived} {
		if s, ok := command.WaitStage(c, "c-1"); !ok || s != factum.StageProjected {
			t.Errorf("%s: %v, %v; want PROJECTED", name, s, ok)
		}
		if s, ok := command.WaitStage(c, "c-2"); ok {
			t.Errorf("%s: another command's wait %v", name, s)
		}
		if c.Value(key{}) != "v" {
			t.Errorf("%s: the parent's value is lost", name)
		}
	}
	if _, ok := command.WaitStage(context.Background(), "c-1"); ok {
		t.Error("a plain context carries a wait")
	}
	cancel()
	<-derived.Done()
	if ctx.Err() == nil {
		t.Error("the parent's cancellation did not reach the wait's context")
	}
}

// ctxBus records the wait stage each send's context carries for its
// command, and answers every command PROCESSED.
type ctxBus struct {
	sink   command.Sink
	stages chan factum.CommandStage
}

func (b ctxBus) Send(ctx context.Context, cmd *factum.Command) error {
	s, _ := command.WaitStage(ctx, cmd.ID)
	b.stages <- s
	go b.sink.Signal(factum.Signal{Stage: factum.StageProcessed, CommandID: cmd.ID, AggregateID: cmd.AggregateID, Code: factum.CodeOk})
	return nil
}

type tick struct{}

type ticked struct{}

// tickerGateway makes a gateway, over an in-memory store, of one
// aggregate type whose tick creates it, with the bus newBus makes on the
// gateway's waiters; it returns the gateway and the aggregate "t".
func tickerGateway(t *testing.T, newBus func(waiters command.Sink) command.Bus) (*command.Gateway, factum.AggregateID) {
	t.Helper()
	def := aggregate.New[struct{}]("test", "ticker",
		aggregate.Handle(func(context.Context, struct{}, tick) ([]any, error) { return []any{ticked{}}, nil }, aggregate.AllowCreate()))
	reg, err := aggregate.NewRegistry(def)
	if err != nil {
		t.Fatal(err)
	}
	waiters := command.NewWaiters()
	g, err := command.NewGateway(command.GatewayConfig{Registry: reg, Bus: newBus(waiters), Waiters: waiters, Store: eventstore.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	return g, def.ID("t")
}

// The gateway hands its bus every send in a context that carries the
// stage the send waits for: SENT for Send, the plan's for SendAndWait
// and SendAndWaitStream.
func TestGatewayHandsTheBusItsWaitStage(t *testing.T) {
	var bus ctxBus
	g, id := tickerGateway(t, func(waiters command.Sink) command.Bus {
		bus = ctxBus{sink: waiters, stages: make(chan factum.CommandStage, 4)}
		return bus
	})
	ctx := context.Background()
	cmd := func() factum.Command { return factum.NewCommand(id, tick{}) }
	for _, tc := range []struct {
		name string
		send func() error
		want factum.CommandStage
	}{
		{"Send", func() error { _, err := g.Send(ctx, cmd()); return err }, factum.StageSent},
		{"SendAndWait SENT", func() error { _, err := g.SendAndWait(ctx, cmd(), command.Wait(factum.StageSent)); return err }, factum.StageSent},
		{"SendAndWait PROCESSED", func() error {
			_, err := g.SendAndWait(ctx, cmd(), command.Wait(factum.StageProcessed))
			return err
		}, factum.StageProcessed},
		{"SendAndWaitStream SNAPSHOT", func() error {
			for _, err := range g.SendAndWaitStream(ctx, cmd(), command.Wait(factum.StageSnapshot)) {
				if err != nil {
					return err
				}
			}
			return nil
		}, factum.StageSnapshot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.send(); err != nil {
				t.Fatal(err)
			}
			if got := <-bus.stages; got != tc.want {
				t.Fatalf("the bus got wait %v, want %v", got, tc.want)
			}
		})
	}
}

// nopBus accepts every command, reading the wait its send names, and
// answers it PROCESSED into sink, if any.
type nopBus struct{ sink command.Sink }

func (b nopBus) Send(ctx context.Context, cmd *factum.Command) error {
	if _, ok := command.WaitStage(ctx, cmd.ID); !ok {
		return factum.IllegalArgument("no wait named")
	}
	if b.sink != nil {
		b.sink.Signal(factum.Signal{Stage: factum.StageProcessed, CommandID: cmd.ID, AggregateID: cmd.AggregateID, Code: factum.CodeOk})
	}
	return nil
}

// Naming a send's wait costs the send no allocation: the gateway's one
// is the command it sends, which holds the context its bus gets.
func TestNamingTheWaitAllocatesNothing(t *testing.T) {
	g, id := tickerGateway(t, func(waiters command.Sink) command.Bus { return nopBus{sink: waiters} })
	ctx := context.Background()
	cmd := factum.NewCommand(id, tick{}) // its IDs set: the gateway makes none
	for _, tc := range []struct {
		name   string
		send   func() error
		pooled bool // its wait is one of the Waiters' pool
	}{
		{"Send", func() error { _, err := g.Send(ctx, cmd); return err }, false},
		{"SendAndWait", func() error { _, err := g.SendAndWait(ctx, cmd, command.Wait(factum.StageProcessed)); return err }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.send(); err != nil {
				t.Fatal(err)
			}
			if tc.pooled && raceDetector {
				t.Skip("the race detector's sync.Pool drops waits")
			}
			if n := testing.AllocsPerRun(100, func() { _ = tc.send() }); n > 1 {
				t.Errorf("%v allocations a send, want the command's alone", n)
			}
		})
	}
}
