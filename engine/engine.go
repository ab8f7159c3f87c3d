package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/saga"
	"github.com/factum-go/factum/snapshot"
)

// Config configures an Engine. Only Store is required; every other zero
// field takes the default of the component it configures.
type Config struct {
	// Store is the event store.
	Store eventstore.Store
	// Codec maps message names to Go types; nil means a new registry for
	// this runtime (registries are never global).
	Codec *codec.Registry

	// Lanes is the number of dispatcher lanes (default 16 × GOMAXPROCS).
	Lanes int
	// QueueSize bounds each lane's queue (default 1024).
	QueueSize int
	// RejectWhenFull makes a send to a full lane fail at once with
	// TooManyRequests instead of waiting for room.
	RejectWhenFull bool

	// CacheSize bounds the cached aggregate states per aggregate type
	// (default aggregate.DefaultCacheSize; negative disables the cache).
	// The snapshotter keeps as many aggregates' last snapshots and states
	// per type, to advance them without a load.
	CacheSize int
	// Retries and RetryBackoff govern retries after a version conflict
	// (defaults aggregate.DefaultRetries and aggregate.DefaultBackoff).
	Retries      int
	RetryBackoff time.Duration
	// CommandMiddleware wraps the processing of every aggregate type's
	// commands, outside each type's own (aggregate.WithMiddleware); the
	// first is the outermost.
	CommandMiddleware []aggregate.Middleware
	// EventMiddleware wraps every event function (processors, sagas, the
	// snapshotter), outside each processor's and function's own; the
	// first is the outermost.
	EventMiddleware []event.Middleware
	// Snapshots, if set, is where processors find the latest state before
	// loading the tail of an aggregate's history. It defaults to
	// SnapshotStore when that is set.
	Snapshots aggregate.SnapshotSource
	// SnapshotStore, if set, receives every aggregate's snapshots from the
	// snapshotter, a consumer group that signals SNAPSHOT; with the All
	// strategy it is the current-state query store.
	SnapshotStore snapshot.Store
	// SnapshotStrategy decides which versions are saved (default
	// snapshot.All()).
	SnapshotStrategy snapshot.Strategy

	// DefaultTimeout and MaxTimeout govern waits (defaults
	// command.DefaultTimeout and command.DefaultMaxTimeout).
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// Consumers tells branch-stage waits which functions consume which
	// events; nil means none.
	Consumers command.Consumers

	// Checker configures the request-ID pre-check; DisablePrecheck turns it
	// off (the event store still refuses duplicates).
	Checker         command.CheckerConfig
	DisablePrecheck bool

	// Processors are the event functions (projections, event handlers) run
	// as consumer groups over the store's log.
	Processors []*event.Processor
	// Sagas are run as consumer groups too, sending their commands through
	// the runtime's gateway.
	Sagas []*saga.Saga
	// Checkpoints keeps the consumer groups' positions (default in
	// memory: every start replays the log, fine for the in-memory store).
	Checkpoints event.CheckpointStore
	// Failures records event-function failures after their in-place
	// retries (the compensation package); nil only logs them.
	Failures event.FailureRecorder
	// Events tunes the consumers (attempts, backoff, batch size, poll
	// interval, logger); its Log, Checkpoints, Failures and Notify fields
	// are set by the runtime.
	Events event.Config
}

// Engine is the command side wired together: gateway, request checker,
// dispatcher (the in-process bus) and a processor per aggregate type, over
// one event store and one codec registry.
type Engine struct {
	store       eventstore.Store
	codec       *codec.Registry
	registry    *aggregate.Registry
	waiters     *command.Waiters
	dispatcher  *command.Dispatcher
	gateway     *command.Gateway
	functions   *event.Registry
	consumers   []*event.Consumer
	checkpoints event.CheckpointStore // the consumers'
	failures    event.FailureRecorder // Config.Failures
	snapshotter *snapshotter
	hints       *stateHints // nil without a snapshot store
	processor   aggregate.Processor
	group       consumerGroup

	mu      sync.Mutex
	started bool
	stopped bool
}

// New builds a runtime serving the aggregate types. Call Start before
// sending commands and Shutdown to stop.
func New(cfg Config, aggregates ...aggregate.Type) (*Engine, error) {
	if cfg.Store == nil {
		return nil, factum.IllegalArgument("runtime: Config.Store is required")
	}
	if len(aggregates) == 0 {
		return nil, factum.IllegalArgument("runtime: no aggregate types given")
	}
	reg, err := aggregate.NewRegistry(aggregates...)
	if err != nil {
		return nil, err
	}
	c := cfg.Codec
	if c == nil {
		c = codec.NewRegistry()
	}
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	if cfg.Snapshots == nil && cfg.SnapshotStore != nil {
		cfg.Snapshots = snapshotSource{cfg.SnapshotStore}
	}
	pcfg := aggregate.ProcessorConfig{
		Store: cfg.Store, Codec: c, CacheSize: cfg.CacheSize, Snapshots: cfg.Snapshots,
		Retries: cfg.Retries, Backoff: cfg.RetryBackoff, Middleware: cfg.CommandMiddleware,
	}
	var hints *stateHints
	// State reports cost the processor an encode per command; they pay
	// only where every state is saved. Under a sparser strategy most would
	// be dropped unused, and the snapshotter folds instead.
	if cfg.SnapshotStore != nil && (cfg.SnapshotStrategy == nil || cfg.SnapshotStrategy == snapshot.All()) {
		hints = newStateHints(snapshotCacheSize(cfg.CacheSize))
		pcfg.States = hints
	}
	proc, err := reg.NewProcessor(pcfg)
	if err != nil {
		return nil, err
	}
	waiters := command.NewWaiters()
	disp, err := command.NewDispatcher(proc, waiters, command.DispatcherConfig{
		Lanes: cfg.Lanes, QueueSize: cfg.QueueSize, RejectWhenFull: cfg.RejectWhenFull,
	})
	if err != nil {
		return nil, err
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
	r := &Engine{store: cfg.Store, codec: c, registry: reg, waiters: waiters, dispatcher: disp, functions: functions, hints: hints, processor: proc, failures: cfg.Failures}
	gw, err := command.NewGateway(command.GatewayConfig{
		Registry: reg, Bus: disp, Waiters: waiters, Store: cfg.Store, Checker: checker,
		Consumers: consumers, Progress: progress{r}, DefaultTimeout: cfg.DefaultTimeout, MaxTimeout: cfg.MaxTimeout,
	})
	if err != nil {
		return nil, err
	}
	r.gateway = gw
	if err := r.buildConsumers(cfg); err != nil {
		return nil, err
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
func (r *Engine) Signals() command.Sink { return r.waiters }

// Dispatcher returns the in-process command bus.
func (r *Engine) Dispatcher() *command.Dispatcher { return r.dispatcher }

// ErrStopped is returned by Start after Shutdown.
var ErrStopped = errors.New("runtime: shut down")

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
		r.dispatcher.Start(ctx)
		r.group.start(ctx, r.consumers)
		r.started = true
	}
	return nil
}

// Functions returns the event functions the runtime runs: processors and
// sagas, by the stage they signal.
func (r *Engine) Functions() *event.Registry { return r.functions }
