package nats

import (
	"context"
	"fmt"
	"hash/maphash"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of BusConfig.
const (
	// DefaultCommandStream is the JetStream stream commands travel on.
	DefaultCommandStream = "FACTUM_COMMANDS"
	// DefaultCommandSubjectPrefix starts every command subject.
	DefaultCommandSubjectPrefix = "factum.cmd"
	// DefaultCommandDuplicates is the stream's de-duplication window: a
	// message sent again with the same message ID within it is stored
	// once, so a command sent alone again with the same command ID is
	// (see HeaderBatch for a command that traveled in a batch).
	DefaultCommandDuplicates = 2 * time.Minute
	// DefaultMaxPending bounds the messages waiting on one subject (one
	// aggregate type's partition), a batch counting as one; a send beyond
	// it is TooManyRequests.
	DefaultMaxPending = 10_000
	// DefaultMaxAckPending bounds the messages of one partition delivered
	// to its owner and not yet processed, a batch counting as one.
	DefaultMaxAckPending = 1024
	// DefaultPublishTimeout bounds the wait for JetStream's acknowledgement
	// of one command.
	DefaultPublishTimeout = 5 * time.Second
	// DefaultAckWait is how long JetStream waits for the owner's
	// acknowledgement of a command before it delivers it again.
	DefaultAckWait = time.Minute
	// DefaultRetryAfter is the retry hint of an UnavailableError.
	DefaultRetryAfter = time.Second
)

// The headers of a command message, beside Nats-Msg-Id (the command ID),
// HeaderTenant and HeaderAggregateID.
const (
	HeaderCommandID   = "Factum-Command-Id"
	HeaderRequestID   = "Factum-Request-Id"
	HeaderCommandName = "Factum-Command-Name"
	// HeaderOrigin names the instance whose gateway accepted the command:
	// the one whose callers wait for its signals. The bus sets it in the
	// command's own header too (factum.Command.Header), so the streams the
	// command appends, and every event function's signal about them, carry
	// it.
	HeaderOrigin = "Factum-Origin"
)

// LocalMode says what the bus does with a command for a partition this
// instance owns.
type LocalMode int

const (
	// LocalFirst (the default) hands the command straight to this
	// instance's lanes, with no message: SENT means the owner admitted it,
	// as with the in-process dispatcher, and the command is durable once
	// PROCESSED. A crash between the two loses it; the caller's wait ends
	// unknown and Lookup settles it. Void commands never take this path.
	LocalFirst LocalMode = iota
	// LocalNever sends every command through JetStream, owned or not:
	// SENT means durably accepted for every command.
	LocalNever
	// LocalDurable publishes the command to JetStream, as LocalNever, and
	// once JetStream stored it (SENT: durably accepted) processes it here
	// at once instead of waiting for the partition's consumer to deliver
	// it; the delivered copy is then only acknowledged. A copy whose local
	// processing did not happen (the instance died, or gave the partition
	// up first) is processed by the partition's owner. It is factum's form
	// of the seed's LocalFirst with its distributed copy.
	LocalDurable
)

// OriginSink is a sink that routes a signal to the instance named by the
// command's HeaderOrigin. When the engine's signal sink (engine.Config.
// Signals) implements it, the bus emits each PROCESSED signal through
// SignalOrigin, with the origin of the command (this instance's name for a
// command accepted here); otherwise through Signal.
type OriginSink interface {
	command.Sink
	SignalOrigin(origin string, s factum.Signal)
}

// OriginBatchSink is an OriginSink that also routes several signals of
// commands one origin sent at once, in order. When the engine's signal
// sink implements it, the bus emits the PROCESSED signals of a delivered
// batch's commands through SignalOriginBatch, a call per run of commands
// of one origin, so that a transport can carry them as one message.
type OriginBatchSink interface {
	OriginSink
	SignalOriginBatch(origin string, sigs []factum.Signal)
}

// NewBus ensures the command stream and returns the engine's bus maker
// (engine.Config.Bus): a durable command bus on JetStream for the context
// of cfg.Partitions.
//
// A command for a partition this instance owns is processed here (see
// LocalMode). Any other is published on subject
// prefix.context.aggregate.partition ([CommandSubject]) and Send returns
// once JetStream has stored it: it is processed by the partition's owner
// even if this instance dies the next moment. The commands of one
// aggregate sent concurrently this way travel together, as one batch
// message (see HeaderBatch and BusConfig.MaxBatch). Each owner consumes its
// partitions in stream order, one aggregate's commands at a time and
// different aggregates in parallel, through the same executor the
// in-process dispatcher runs, and acknowledges each command once it was
// processed (a batch once, its commands as one run); a command delivered
// again (its owner died first), or stored twice (sent again after a lost
// acknowledgement of its batch), is recognised by its request ID in the
// event store. A send for a partition
// whose owner is unreachable, or while NATS is, fails at once with an
// UnavailableError.
func NewBus(ctx context.Context, cfg BusConfig) (engine.NewBus, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	stream, err := ensureCommands(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	var once atomic.Bool
	return func(proc command.Executor, signals command.Sink) (engine.Bus, error) {
		if proc == nil || signals == nil {
			return nil, factum.IllegalArgument("nats: the bus needs an executor and a sink")
		}
		if once.Swap(true) {
			// Two buses on one Partitions would both act on its partitions.
			return nil, factum.IllegalArgument("nats: a bus config makes one bus; call NewBus per engine")
		}
		return newBus(cfg, stream, proc, signals), nil
	}, nil
}

// CommandSubject returns the subject a command of the aggregate type for
// the partition travels on: prefix.context.aggregate.partition.
func CommandSubject(prefix string, named factum.NamedAggregate, partition int) string {
	return prefix + "." + named.Context + "." + named.Aggregate + "." + strconv.Itoa(partition)
}

// Bus is the JetStream command bus of one engine (see NewBus). It is safe
// for concurrent use.
type Bus struct {
	cfg    BusConfig
	js     jetstream.JetStream
	nc     *natsgo.Conn
	parts  *Partitions
	stream jetstream.Stream
	proc   command.Executor
	// runs is proc when it takes runs (command.RunExecutor): a batch's
	// commands go to it as one run.
	runs   command.RunExecutor
	sink   command.Sink
	origin OriginSink      // sink, when it routes by origin
	batch  OriginBatchSink // sink, when it routes several signals at once
	// forgetter drops the cached states of a partition given up; nil when
	// the executor caches none.
	forgetter aggregate.Forgetter
	guard     time.Duration
	// epoch is the bus's start on the monotonic clock: the claims' cached
	// lease ends (partState.lease) count from it.
	epoch time.Time
	// originOnly is the header of a command that had none: HeaderOrigin
	// alone, one map shared by all of them, since factum never writes a
	// header in place (WithHeader, the tracer and sagas copy it). It is
	// also the header of the streams such commands append (see
	// originHeader).
	originOnly map[string]string

	seed  maphash.Seed
	lanes []lane
	state []partState // by partition

	mu        sync.Mutex // guards consumers and unsub
	consumers map[int]*partConsumer
	unsub     func()

	started  atomic.Bool
	closed   atomic.Bool
	sending  atomic.Int64  // sends past the closed check and not returned
	busy     atomic.Int64  // jobs queued or in process
	finished atomic.Uint64 // jobs finished since Start
	stopping chan struct{} // closed when admission stops

	runCtx context.Context
	// procCtx is runCtx carrying originHeader: the parent of every
	// command's context (see process).
	procCtx context.Context
	cancel  context.CancelFunc
	aborted atomic.Bool
	lwg     sync.WaitGroup // lanes
	cwg     sync.WaitGroup // consumers
	once    sync.Once
	dropped atomic.Int64

	out outboxes // the sends of crossing commands, by aggregate (see sendCoalesced)

	// hooks are test seams at the points where timing decides an outcome;
	// nil outside tests.
	hooks *busHooks
}

// busHooks are the bus's test seams, each set (or left nil) by a test
// before Start.
type busHooks struct {
	// pulled runs when the pull loop received a delivered message, before
	// the bus records it anywhere: the message is in no lane and on no
	// list of this instance, as in the client's buffer. False drops it,
	// as a pull that stops drops what it buffered.
	pulled func(ctx context.Context) bool
	// draining runs when the drain read the stream's last sequence, the
	// commands it waits for.
	draining func()
	// unquiet runs each time the drain finds a partition not yet drained.
	unquiet func()
	// coalescing runs before a publish of sendCoalesced goes out, with
	// the number of commands it carries.
	coalescing func(commands int)
}

var _ engine.Bus = (*Bus)(nil)

func newBus(cfg BusConfig, stream jetstream.Stream, proc command.Executor, sink command.Sink) *Bus {
	b := &Bus{
		cfg: cfg, js: cfg.JetStream, nc: cfg.JetStream.Conn(), parts: cfg.Partitions, stream: stream,
		proc: proc, sink: sink, guard: cfg.Partitions.LeaseDuration() / 10,
		epoch: time.Now(), originOnly: map[string]string{HeaderOrigin: cfg.Partitions.Instance()},
		seed: maphash.MakeSeed(), lanes: make([]lane, cfg.Lanes), state: make([]partState, cfg.Partitions.Count()),
		consumers: map[int]*partConsumer{}, stopping: make(chan struct{}),
	}
	b.origin, _ = sink.(OriginSink)
	b.batch, _ = sink.(OriginBatchSink)
	b.forgetter, _ = proc.(aggregate.Forgetter)
	if r, ok := proc.(command.RunExecutor); ok && r.TakesRuns() {
		b.runs = r
	}
	for i := range b.lanes {
		b.lanes[i].q = make(chan job, cfg.QueueSize)
	}
	return b
}

// Instance returns the name of this instance, the origin of the commands
// it accepts.
func (b *Bus) Instance() string { return b.parts.Instance() }

// Start starts the lanes and the consumption of the partitions this
// instance owns, now and as it gains them. Commands are processed with a
// context derived from ctx without its cancellation. Start is idempotent.
func (b *Bus) Start(ctx context.Context) {
	b.once.Do(func() {
		b.runCtx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
		b.procCtx = aggregate.WithCacheObserver(b.runCtx, originHeader{only: b.originOnly, origin: b.Instance()})
		for i := range b.lanes {
			b.lwg.Add(1)
			go b.run(b.lanes[i].q)
		}
		b.started.Store(true)
		b.mu.Lock()
		b.unsub = b.parts.Subscribe(b.onAcquire, b.onRelease)
		b.mu.Unlock()
		// Partitions held before the subscription: a later acquire with
		// the same token is a no-op.
		for _, n := range b.parts.Owned() {
			if token, ok := b.parts.Owns(n); ok {
				b.onAcquire(n, token)
			}
		}
	})
}

// Send implements command.Bus. A command for a partition this instance
// owns goes to its lanes (LocalFirst, unless the command is void), even
// while its claim waits for a late renewal, so that no command overtakes
// one queued here, once the claim's consumer delivered the commands the
// stream held (before that it is published, behind them), and while
// commands of its partition accepted here under a claim that ended are
// still in the lanes (they are handed over to the stream in order, and it
// behind them); any other is published to JetStream and
// Send returns once JetStream stored it, waiting for that answer up to
// PublishTimeout even past ctx's end, so that an error means the command
// was not accepted. Such sends of one aggregate that overlap travel
// together: while a publish of the aggregate's commands is in flight,
// the next ones wait and then go as one batch message (HeaderBatch), and
// each Send returns the batch's outcome; one whose ctx ends while it
// waits is not sent and fails with TooManyRequests wrapping ctx's
// error. It fails with an UnavailableError (code TooManyRequests,
// retryable) while NATS is unreachable or when the
// partition's owner is, with TooManyRequests when the partition's subject
// or the local lane is full, and with TooManyRequests wrapping
// factum.ErrClosed once Shutdown began. The bus owns cmd afterwards: it
// sets HeaderOrigin in its header, to a map shared with other commands when
// cmd had none (headers are never written in place).
func (b *Bus) Send(ctx context.Context, cmd *factum.Command) error {
	if !b.started.Load() {
		return factum.Errorf(factum.CodeIllegalState, "nats: %w", command.ErrNotStarted)
	}
	if b.closed.Load() {
		return factum.Errorf(factum.CodeTooManyRequests, "nats: %w: not accepting commands", factum.ErrClosed)
	}
	if cmd.AggregateID.Context != b.parts.cfg.Context {
		return factum.IllegalArgument(fmt.Sprintf("nats: this bus carries the commands of context %s, not %s", b.parts.cfg.Context, cmd.AggregateID.Context))
	}
	n := PartitionOf(cmd.AggregateID.ID, len(b.state))
	if b.cfg.Local == LocalFirst && !cmd.IsVoid {
		// While the claim is this instance's, its commands queue here,
		// even when the claim is short of time: one sent around the lanes
		// could overtake one queued in them. The lane waits for the
		// renewal, or hands the command over to the stream once the
		// claim is given up; so does it with one queued here behind
		// commands of the partition whose claim ended (token 0).
		// enqueueLocal checks admission under the lane's lock, as the
		// in-process dispatcher does, so this path needs no count of its
		// own for Shutdown.
		if token, ok := b.localClaim(n); ok {
			b.setOrigin(ctx, cmd)
			return b.enqueueLocal(ctx, job{cmd: cmd, n: n, token: token})
		}
	}
	return b.sendStored(ctx, cmd, n)
}

// sendStored is Send for a command that JetStream stores: one for a
// partition another instance owns (or none), a void one, every command of
// LocalNever and LocalDurable, and one accepted while its claim catches up
// with the commands stored before it.
func (b *Bus) sendStored(ctx context.Context, cmd *factum.Command, n int) error {
	// Counted before the check, so that Shutdown, which sets closed
	// first, waits for every send that passed it.
	b.sending.Add(1)
	defer b.sending.Add(-1)
	if b.closed.Load() {
		return factum.Errorf(factum.CodeTooManyRequests, "nats: %w: not accepting commands", factum.ErrClosed)
	}
	b.setOrigin(ctx, cmd)
	if b.cfg.Local != LocalNever && !cmd.IsVoid {
		token, fwd, err := b.forward(ctx, cmd, n)
		switch {
		case fwd:
			return err
		case token != 0 && b.cfg.Local == LocalDurable:
			return b.sendDurable(ctx, job{cmd: cmd, n: n, token: token})
		case token != 0:
			return b.enqueueLocal(ctx, job{cmd: cmd, n: n, token: token})
		}
		// Crossing, counted by forward until stored (see crossed).
		seq, err := b.sendCoalesced(ctx, cmd, n)
		b.crossed(n, seq)
		return err
	}
	_, err := b.sendCoalesced(ctx, cmd, n)
	return err
}

// setOrigin sets HeaderOrigin in cmd's header to this instance. A command
// without a header gets the map the bus shares among them; any other gets a
// copy of its own with the origin added, since the caller's map may be
// shared. A factum.OriginWaitHeader is kept only when it names the stage
// ctx carries for cmd (command.WaitStage: what Signals.Bus stamps), and
// deleted otherwise: a caller's value, or one a saga's command inherits
// from its source stream, would keep from the origin signals its wait
// needs.
func (b *Bus) setOrigin(ctx context.Context, cmd *factum.Command) {
	stale := false
	if _, ok := cmd.Header[factum.OriginWaitHeader]; ok {
		wait, _ := command.WaitStage(ctx, cmd.ID)
		stale = !wait.Valid() || factum.OriginWait(cmd.Header) != wait
	}
	switch {
	case len(cmd.Header) == 0:
		cmd.Header = b.originOnly
	case stale || cmd.Header[HeaderOrigin] != b.originOnly[HeaderOrigin]:
		h := make(map[string]string, len(cmd.Header)+1)
		maps.Copy(h, cmd.Header)
		h[HeaderOrigin] = b.originOnly[HeaderOrigin]
		if stale {
			delete(h, factum.OriginWaitHeader)
		}
		cmd.Header = h
	}
}

// Idle reports whether no command is queued in this instance's lanes or in
// process there.
func (b *Bus) Idle() bool { return b.busy.Load() == 0 }

// Done returns how many commands the lanes finished since Start.
func (b *Bus) Done() uint64 { return b.finished.Load() }

// Unavailable answers a send that cannot reach the partition's owner.
func (b *Bus) unavailable(cmd *factum.Command, n int, owner, reason string, cause error) *factum.Error {
	ue := &UnavailableError{Partition: n, Owner: owner, Reason: reason, After: b.cfg.RetryAfter, Err: cause}
	return factum.Errorf(factum.CodeTooManyRequests, "%w", ue).With(cmd.AggregateID, 0, cmd.ID, cmd.RequestIDOrID())
}
