package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/internal/enginetest"
	"github.com/factum-go/factum/memory"
)

// countingBus is a transport stand-in: it counts the commands it carries
// and hands them to an in-process dispatcher.
type countingBus struct {
	*command.Dispatcher
	sent atomic.Int64
}

func (b *countingBus) Send(ctx context.Context, cmd *factum.Command) error {
	b.sent.Add(1)
	return b.Dispatcher.Send(ctx, cmd)
}

// countingSink forwards to the local waiters, as a transport delivers the
// signals it receives.
type countingSink struct {
	local   command.Sink
	signals atomic.Int64
}

func (s *countingSink) Signal(sig factum.Signal) {
	s.signals.Add(1)
	s.local.Signal(sig)
}

func TestTheBusAndTheSignalSinkAreConfiguration(t *testing.T) {
	ctx := t.Context()
	var bus *countingBus
	var sink *countingSink
	rt, err := engine.New(engine.Config{
		Storage: memory.New(),
		Bus: func(proc command.Executor, signals command.Sink) (engine.Bus, error) {
			d, err := command.NewDispatcher(proc, signals, command.DispatcherConfig{})
			bus = &countingBus{Dispatcher: d}
			return bus, err
		},
		Signals: func(local command.Sink) (command.Sink, error) {
			sink = &countingSink{local: local}
			return sink, nil
		},
	}, counterType(nil))
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Run(t, rt)
	id := factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "test", Aggregate: "counter"}, ID: "c1"}
	if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: 1}), command.Wait(factum.StageSnapshot)); err != nil {
		t.Fatal(err)
	}
	if bus.sent.Load() != 1 {
		t.Fatalf("the configured bus carried %d commands, want 1", bus.sent.Load())
	}
	// PROCESSED from the processor, SNAPSHOT from the snapshotter.
	if sink.signals.Load() < 2 {
		t.Fatalf("the configured sink saw %d signals, want PROCESSED and SNAPSHOT", sink.signals.Load())
	}
	if rt.Signals() != command.Sink(sink) || rt.Bus() != engine.Bus(bus) {
		t.Fatal("Signals and Bus do not return the configured ones")
	}
}

func TestABusOrSinkThatFailsFailsNew(t *testing.T) {
	boom := errors.New("boom")
	for name, cfg := range map[string]engine.Config{
		"bus":     {Bus: func(command.Executor, command.Sink) (engine.Bus, error) { return nil, boom }},
		"signals": {Signals: func(command.Sink) (command.Sink, error) { return nil, boom }},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.Storage = memory.New()
			if _, err := engine.New(cfg, counterType(nil)); !errors.Is(err, boom) {
				t.Fatalf("New = %v, want the constructor's error", err)
			}
		})
	}
	cfg := engine.Config{Storage: memory.New(), Bus: func(command.Executor, command.Sink) (engine.Bus, error) { return nil, nil }}
	if _, err := engine.New(cfg, counterType(nil)); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("a nil bus: %v, want IllegalArgument", err)
	}
}

// sendCounter counts the commands sent through it.
type sendCounter struct {
	next command.Bus
	sent atomic.Int64
}

func (c *sendCounter) Send(ctx context.Context, cmd *factum.Command) error {
	c.sent.Add(1)
	return c.next.Send(ctx, cmd)
}

func TestASendWrapperSeesEverySendAndKeepsTheDispatcher(t *testing.T) {
	ctx := t.Context()
	var wrap *sendCounter
	rt, err := engine.New(engine.Config{
		Storage: memory.New(),
		Bus: engine.SendWrapper(engine.DispatcherBus(command.DispatcherConfig{}), func(next command.Bus) command.Bus {
			wrap = &sendCounter{next: next}
			return wrap
		}),
	}, counterType(nil))
	if err != nil {
		t.Fatal(err)
	}
	enginetest.Run(t, rt)
	id := factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "test", Aggregate: "counter"}, ID: "w1"}
	for i := range 3 {
		if _, err := rt.Gateway().SendAndWait(ctx, factum.NewCommand(id, Add{N: i + 1}), command.Wait(factum.StageProcessed)); err != nil {
			t.Fatal(err)
		}
	}
	if wrap == nil || wrap.sent.Load() != 3 {
		t.Fatalf("the wrapper saw %v sends, want 3", wrap)
	}
	if rt.Dispatcher() == nil {
		t.Fatal("Dispatcher() is nil under a SendWrapper over the dispatcher")
	}
}

// The default bus's settings beside a bus of one's own would be ignored:
// New refuses them; and Dispatcher finds the dispatcher under any number
// of send wrappers.
func TestBusSettingsAndWrappers(t *testing.T) {
	wrap := func(next command.Bus) command.Bus { return next }
	inner := engine.DispatcherBus(command.DispatcherConfig{})
	if _, err := engine.New(engine.Config{Storage: memory.New(), Bus: inner, Lanes: 4}, counterType(nil)); factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("Lanes beside Config.Bus: %v, want IllegalArgument", err)
	}
	rt, err := engine.New(engine.Config{Storage: memory.New(), Bus: engine.SendWrapper(engine.SendWrapper(inner, wrap), wrap)}, counterType(nil))
	if err != nil {
		t.Fatal(err)
	}
	if rt.Dispatcher() == nil {
		t.Fatal("Dispatcher() is nil under two send wrappers")
	}
}
