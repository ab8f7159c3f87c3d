package telemetry_test

import (
	"context"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/examples/order"
	"github.com/factum-go/factum/telemetry"
)

// pipeline is the command side wired by hand the way the engine wires it
// (gateway, bus, dispatcher, processor over one store), with the
// telemetry's decorators and middleware in the places the engine's seams
// put them. Without tel it is the plain pipeline.
type pipeline struct {
	gw    *command.Gateway
	disp  *command.Dispatcher
	store eventstore.Store
	codec *codec.Registry
}

func newPipeline(t testing.TB, tel *telemetry.Telemetry) *pipeline {
	t.Helper()
	reg, err := aggregate.NewRegistry(order.Orders, order.Inventory)
	if err != nil {
		t.Fatal(err)
	}
	c := codec.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	var store eventstore.Store = eventstore.NewMemory()
	if tel != nil {
		store = tel.Store(store)
	}
	cfg := aggregate.ExecutorConfig{Store: store, Codec: c}
	if tel != nil {
		// As the engine wires it: the executor wraps each type's
		// processing in the middleware once.
		cfg.Middleware = []aggregate.Middleware{tel.Commands()}
	}
	proc, err := reg.NewExecutor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var cp command.Executor = proc
	waiters := command.NewWaiters()
	disp, err := command.NewDispatcher(cp, waiters, command.DispatcherConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var bus command.Bus = disp
	if tel != nil {
		bus = tel.Bus(disp)
	}
	gw, err := command.NewGateway(command.GatewayConfig{Registry: reg, Bus: bus, Waiters: waiters, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	disp.Start(context.Background())
	t.Cleanup(func() { _ = disp.Shutdown(context.Background()) })
	return &pipeline{gw: gw, disp: disp, store: store, codec: c}
}

// sagaHandlers returns the Fulfilment saga's functions sending through
// the pipeline's gateway, wrapped in mw when it is set.
func (p *pipeline) sagaHandlers(t testing.TB, mw event.Middleware) []handler {
	t.Helper()
	proc, err := order.Fulfilment.Processor(p.codec, p.gw)
	if err != nil {
		t.Fatal(err)
	}
	var out []handler
	for _, h := range proc.Handlers() {
		fn := h.Handle
		if mw != nil {
			fn = mw(h, h.Handle)
		}
		out = append(out, handler{h: h, fn: fn})
	}
	return out
}

type handler struct {
	h  *event.Handler
	fn event.StreamFunc
}

// deliver hands the aggregate's stream at version to every handler that
// consumes its events, as a consumer would (a context of its own).
func (p *pipeline) deliver(t testing.TB, hs []handler, id factum.AggregateID, version int) {
	t.Helper()
	streams, err := p.store.Load(context.Background(), id, version, version)
	if err != nil || len(streams) != 1 {
		t.Fatalf("load %s v%d: %v (%d streams)", id, version, err, len(streams))
	}
	s := &streams[0]
	for _, h := range hs {
		for _, e := range s.Events {
			if h.h.Consumes(s.AggregateID.NamedAggregate, e.Name) {
				if err := h.fn(context.Background(), s); err != nil {
					t.Fatalf("%s: %v", h.h.Function, err)
				}
				break
			}
		}
	}
}
