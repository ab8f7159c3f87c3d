package engine

import (
	"time"

	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/component"
	"github.com/factum-go/factum/event"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/saga"
	"github.com/factum-go/factum/snapshot"
)

// Config configures an Engine. Storage or Store is required; every other
// zero field takes the default of the component it configures.
type Config struct {
	// Storage, if set, is the backend the engine opens its stores in, at
	// New, for the bounded context of its aggregate types: the event store,
	// the snapshot store and the checkpoints (sqlite.DB, postgres.DB,
	// memory.Storage). Store, SnapshotStore and Checkpoints, when set,
	// override the store of the same kind.
	Storage Storage
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
	// MaxRun bounds the commands a lane takes at once and hands to the
	// executors as runs, each aggregate's committed together where the
	// event store appends groups (default command.DefaultMaxRun; 1 takes
	// one command at a time). See command.DispatcherConfig.
	MaxRun int

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
	// EventMiddleware wraps every event function (executors, sagas, the
	// snapshotter), outside each executor's and function's own; the
	// first is the outermost.
	EventMiddleware []event.Middleware
	// Snapshots, if set, is where executors find the latest state before
	// loading the tail of an aggregate's history. It defaults to
	// SnapshotStore when that is set.
	Snapshots aggregate.SnapshotSource
	// SnapshotStore, if set, receives every aggregate's snapshots from the
	// snapshotter, a consumer group that signals SNAPSHOT; with the All
	// strategy it is the current-state query store.
	SnapshotStore snapshot.Store
	// SnapshotStrategy decides which versions are saved (default
	// snapshot.All()); it configures the default snapshotter only.
	SnapshotStrategy snapshot.Strategy
	// Snapshotter, if set, replaces the default snapshotter (a
	// snapshotter.Component over SnapshotStore, SnapshotStrategy and
	// CacheSize, used whenever there is a snapshot store). It is set up
	// after Components, seeing every aggregate type, and attached and run
	// after them. SnapshotStore still serves reads (Snapshots, HTTP,
	// compensation) and executors' loads.
	Snapshotter component.Component[component.Host]
	// DisableSnapshotter runs no snapshotter: nothing saves snapshots and
	// nothing signals SNAPSHOT, while SnapshotStore still serves reads
	// and executors' loads.
	DisableSnapshotter bool

	// DefaultTimeout and MaxTimeout govern waits (defaults
	// command.DefaultTimeout and command.DefaultMaxTimeout).
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// Consumers tells branch-stage waits which functions consume which
	// events; nil means none.
	Consumers command.Consumers
	// IDKey keys the aggregate IDs of creates sent without one: a
	// deployment secret of at least command.MinIDKeyLen bytes, the same on
	// every instance, without which no one can compute the ID a create
	// will get from its tenant and request ID (see
	// command.GatewayConfig.IDKey). Set it whenever the engine serves
	// tenants that must not interfere with each other. Nil keeps the
	// unkeyed command.CreateID.
	IDKey []byte

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
	// Components are run with the engine: their aggregate types, event
	// functions and failure recorder join the engine's at New, they are
	// attached in order, run from Start and stopped at Shutdown in
	// reverse order (see Component).
	Components []Component
	// Bus, if set, makes the bus that carries commands from the gateway to
	// the executors (default: the in-process dispatcher, configured by
	// Lanes, QueueSize, RejectWhenFull and MaxRun).
	Bus NewBus
	// Signals, if set, makes the sink that executors and event functions
	// emit wait signals into, from the engine's local waiters (default: the
	// waiters themselves). A transport routes each signal to the instance
	// whose gateway waits for it, and delivers the signals it receives
	// into local.
	Signals func(local command.Sink) (command.Sink, error)

	// Events tunes the consumers (attempts, backoff, batch size, poll
	// interval, logger); its Log, Checkpoints, Failures and Notify fields
	// are set by the runtime.
	Events event.Config
}
