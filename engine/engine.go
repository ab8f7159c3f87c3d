package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/snapshot"
)

// Engine is the command side wired together: gateway, request checker,
// dispatcher (the in-process bus) and a processor per aggregate type, over
// one event store and one codec registry.
type Engine struct {
	store       eventstore.Store
	codec       *codec.Registry
	registry    *aggregate.Registry
	waiters     *command.Waiters
	sink        command.Sink // where signals go: waiters, or Config.Signals's
	bus         Bus
	snapshots   snapshot.Store // nil without one
	components  components
	gateway     *command.Gateway
	functions   *event.Registry
	consumers   []*event.Consumer
	checkpoints event.CheckpointStore // the consumers'
	failures    event.FailureRecorder // Config.Failures
	snapshotter regenerator           // nil without a snapshotter that regenerates
	processor   aggregate.Executor
	group       consumerGroup
	// tune adjusts the consumer config of a component's processor.
	tune map[*event.Processor]func(*event.Processor, event.Config) event.Config

	mu      sync.Mutex
	started bool
	stopped bool
}

// New builds an engine serving the aggregate types, and those its
// components bring. With a Storage, it opens the stores of the types'
// bounded context there (they must share one). Call Start before sending
// commands and Shutdown to stop.
func New(cfg Config, aggregates ...aggregate.Type) (*Engine, error) {
	if cfg.Store == nil && cfg.Storage == nil {
		return nil, factum.IllegalArgument("engine: Config.Storage or Config.Store is required")
	}
	if len(aggregates) == 0 {
		return nil, factum.IllegalArgument("engine: no aggregate types given")
	}
	// New takes no context: opening the stores is bounded by the
	// backends' own timeouts (busy and connect timeouts).
	if err := openStores(context.Background(), &cfg, aggregates); err != nil {
		return nil, err
	}
	c := cfg.Codec
	if c == nil {
		c = codec.NewRegistry()
	}
	members, sn, err := membersOf(&cfg)
	if err != nil {
		return nil, err
	}
	aggregates, parts, err := setupComponents(&cfg, c, members, aggregates)
	if err != nil {
		return nil, err
	}
	extra := parts.consumers
	reg, err := aggregate.NewRegistry(aggregates...)
	if err != nil {
		return nil, err
	}
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	if cfg.Snapshots == nil && cfg.SnapshotStore != nil {
		cfg.Snapshots = SnapshotSource(cfg.SnapshotStore)
	}
	pcfg := aggregate.ExecutorConfig{
		Store: cfg.Store, Codec: c, CacheSize: cfg.CacheSize, Snapshots: cfg.Snapshots,
		Retries: cfg.Retries, Backoff: cfg.RetryBackoff, Middleware: cfg.CommandMiddleware, States: parts.states,
	}
	proc, err := reg.NewExecutor(pcfg)
	if err != nil {
		return nil, err
	}
	waiters := command.NewWaiters()
	var sink command.Sink = waiters
	if cfg.Signals != nil {
		if sink, err = cfg.Signals(waiters); err != nil {
			return nil, fmt.Errorf("engine: signals: %w", err)
		}
		if sink == nil {
			return nil, factum.IllegalArgument("engine: Config.Signals made no sink")
		}
	}
	newBus := cfg.Bus
	if newBus == nil {
		newBus = inProcessBus(cfg)
	} else if cfg.Lanes != 0 || cfg.QueueSize != 0 || cfg.RejectWhenFull || cfg.MaxRun != 0 {
		// They configure the default bus; a bus of one's own takes its
		// settings where it is made (DispatcherBus's config, say).
		return nil, factum.IllegalArgument("engine: Config.Lanes, QueueSize, RejectWhenFull and MaxRun configure the default bus; with Config.Bus set them where the bus is made")
	}
	bus, err := newBus(proc, sink)
	if err != nil {
		return nil, err
	}
	if bus == nil {
		return nil, factum.IllegalArgument("engine: Config.Bus made no bus")
	}
	var checker *command.RequestChecker
	if !cfg.DisablePrecheck {
		if checker, err = command.NewRequestChecker(cfg.Store, cfg.Checker); err != nil {
			return nil, err
		}
	}
	functions := &event.Registry{}
	consumers := cfg.Consumers
	if consumers == nil {
		consumers = functions
	}
	if len(extra) > 0 {
		consumers = append(joinedConsumers{consumers}, extra...)
	}
	r := &Engine{store: cfg.Store, snapshots: cfg.SnapshotStore, codec: c, registry: reg, waiters: waiters, sink: sink,
		bus: bus, functions: functions, processor: proc, failures: cfg.Failures,
		components: components{list: members}, tune: parts.tune}
	r.snapshotter, _ = sn.(regenerator)
	gw, err := command.NewGateway(command.GatewayConfig{
		Registry: reg, Bus: bus, Waiters: waiters, Store: cfg.Store, Checker: checker,
		Consumers: consumers, Progress: progress{r}, DefaultTimeout: cfg.DefaultTimeout, MaxTimeout: cfg.MaxTimeout,
		IDKey: cfg.IDKey,
	})
	if err != nil {
		return nil, err
	}
	r.gateway = gw
	if err := r.buildConsumers(cfg); err != nil {
		return nil, err
	}
	for _, m := range members {
		if err := m.attach(r); err != nil {
			return nil, fmt.Errorf("engine: %s: %w", m.name, err)
		}
	}
	return r, nil
}

// Gateway returns the command gateway.
func (r *Engine) Gateway() *command.Gateway { return r.gateway }

// Registry returns the aggregate types the runtime serves.
func (r *Engine) Registry() *aggregate.Registry { return r.registry }

// Codec returns the runtime's message type registry.
func (r *Engine) Codec() *codec.Registry { return r.codec }

// Store returns the event store.
func (r *Engine) Store() eventstore.Store { return r.store }

// Signals returns the sink that wait signals go into: event functions emit
// their branch-stage signals here.
func (r *Engine) Signals() command.Sink { return r.sink }

// Dispatcher returns the in-process command bus (under a SendWrapper too),
// or nil when Config.Bus made another.
func (r *Engine) Dispatcher() *command.Dispatcher {
	b := r.bus
	for {
		w, ok := b.(wrappedBus)
		if !ok {
			break
		}
		b = w.Bus
	}
	d, _ := b.(*command.Dispatcher)
	return d
}

// Executor returns the aggregate executor the bus delivers commands to.
func (r *Engine) Executor() aggregate.Executor { return r.processor }

// Bus returns the command bus.
func (r *Engine) Bus() Bus { return r.bus }

// Snapshots returns the snapshot store the snapshotter saves into, nil
// without one: HTTP reads and compensation's queries use it. With a
// Storage it is a snapshot.QueryStore.
func (r *Engine) Snapshots() snapshot.Store { return r.snapshots }

// ErrStopped is returned by Start after Shutdown.
var ErrStopped = errors.New("engine: shut down")

// Start starts processing. Commands run under a context derived from ctx
// that keeps its values but not its cancellation: processing stops at
// Shutdown, not when ctx ends. Start is idempotent; after Shutdown it
// returns ErrStopped.
func (r *Engine) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return factum.Errorf(factum.CodeIllegalState, "%w", ErrStopped)
	}
	if !r.started {
		r.bus.Start(ctx)
		r.group.start(ctx, r.consumers)
		r.components.start(ctx)
		r.started = true
	}
	return nil
}

// Failures returns the recorder of event-function failures (Config.Failures
// or a component's), nil without one: components that run functions of
// their own record their failures there.
func (r *Engine) Failures() event.FailureRecorder { return r.failures }

// Functions returns the event functions the runtime runs: processors and
// sagas, by the stage they signal.
func (r *Engine) Functions() *event.Registry { return r.functions }
