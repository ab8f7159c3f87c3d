package component

import (
	"context"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/snapshot"
)

// Component is a part of an application that lives with an engine of type
// E: it brings aggregate types and event functions, attaches to the engine
// once it is built, and runs work of its own from Start until Shutdown.
// Its lifecycle:
//
//  1. Setup, at the engine's New, before the engine is built: the
//     component learns the engine's bounded context and stores (Env) and
//     returns what it brings (Parts), which joins the engine's own.
//  2. Attach, at New, once the engine is built. An error from Setup or
//     Attach fails New.
//  3. Run, at Start, after the bus and the consumers have started, in a
//     goroutine of its own. Run works until its ctx is cancelled and then
//     returns once the work in hand is done; a component with nothing to
//     run returns nil at once.
//  4. At Shutdown, first of all and in reverse order, the engine cancels
//     each Run and waits for it to return (at most until Shutdown's ctx
//     ends), then drains its own work: a component is a client of the
//     gateway, as HTTP is, and stops sending before the gateway closes.
//     The event functions it brought are drained with the engine's.
type Component[E any] interface {
	Setup(env Env) (Parts, error)
	Attach(engine E) error
	Run(ctx context.Context) error
}

// Env is what a component learns of the engine at Setup.
type Env struct {
	// Context is the bounded context of the engine's aggregate types (the
	// first type's when they name several, without a Storage).
	Context string
	// Store is the engine's event store.
	Store eventstore.Store
	// Snapshots is the engine's snapshot store; nil without one. With a
	// Storage it is a snapshot.QueryStore.
	Snapshots snapshot.Store
	// Codec is the engine's message type registry.
	Codec *codec.Registry
	// Types are the aggregate types the engine serves as far as they are
	// known at this component's Setup: the engine's own and those the
	// components set up before it brought. The engine's snapshotter is
	// set up after every other component and sees them all.
	Types []aggregate.Type
}

// Parts is what a component brings to the engine.
type Parts struct {
	// Types are aggregate types served next to the engine's own.
	Types []aggregate.Type
	// Processors are event functions run as consumer groups next to the
	// engine's own.
	Processors []*event.Processor
	// Failures, if set, records event-function failures; it is an
	// IllegalArgument error at New for it to meet another recorder (the
	// engine's own or another component's).
	Failures event.FailureRecorder
	// Consumers, if set, tells branch-stage waits which functions of the
	// component's own (not Processors) consume which events: the gateway
	// asks it along with the engine's function registry, so a wait
	// expects their signals too.
	Consumers command.Consumers
	// States, if set, is told every state the aggregate executor reaches
	// by an append (aggregate.ExecutorConfig's States); it is an
	// IllegalArgument error at New for it to meet another observer.
	States aggregate.StateObserver
	// Consumer, if set, adjusts the consumer configuration of each of
	// Processors before the engine makes its consumer: cfg is what the
	// engine would use (its log, checkpoints, failure recorder, signal
	// sink and event settings), and the result is what the consumer runs
	// with. A component wraps the checkpoints or the signals of its own
	// consumers there, or sets a default the engine's settings leave open.
	Consumer func(p *event.Processor, cfg event.Config) event.Config
}

// Host is the engine as a component that cannot import the engine's
// package sees it at Attach (a Component[Host]); the engine implements it.
type Host interface {
	// Registry returns the aggregate types the engine serves.
	Registry() *aggregate.Registry
	// Executor returns the engine's aggregate executor, which runs the
	// commands the bus delivers.
	Executor() aggregate.Executor
	// Failures returns the recorder of event-function failures, nil
	// without one.
	Failures() event.FailureRecorder
	// Signals returns the sink that wait signals go into.
	Signals() command.Sink
}
