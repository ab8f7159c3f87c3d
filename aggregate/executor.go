package aggregate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/codec"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/built"
	"github.com/factum-go/factum/internal/uuidv7"
)

// Defaults of ExecutorConfig.
const (
	// DefaultCacheSize is the number of aggregate states an executor keeps
	// per aggregate type.
	DefaultCacheSize = 65536
	// DefaultRetries is how often a command without an expected version is
	// retried after a recoverable failure: an EventVersionConflict or a
	// transient store error (see IsTransient).
	DefaultRetries = 3
	// DefaultBackoff is the delay before the first retry; it doubles for
	// each further one, and each delay is jittered (between half and all
	// of it is waited).
	DefaultBackoff = 2 * time.Millisecond
)

// Executor handles commands: load the aggregate, decide, append. Process
// never panics and never returns an error: the outcome, success or failure,
// is the PROCESSED signal it returns. Callers must run one aggregate's
// commands one at a time (the dispatcher does) for the state cache to help;
// concurrent calls for one aggregate stay correct, resolved by the store's
// version check.
//
// The executors NewExecutor returns (a Definition's, a Registry's) also
// process runs of one aggregate's commands (command.RunExecutor's
// ProcessRun): over a store that appends groups they decide a run's
// commands one after another and commit them together (see ProcessRun).
type Executor interface {
	Process(ctx context.Context, cmd *factum.Command) factum.Signal
}

// ExecutorConfig configures an executor.
type ExecutorConfig struct {
	// Store is the event store; required.
	Store eventstore.Store
	// Codec encodes events into streams and decodes them when sourcing;
	// required, and it must hold the aggregate's types (see Register).
	Codec *codec.Registry
	// CacheSize bounds the cached aggregate states by count; 0 means
	// DefaultCacheSize and a negative value disables the cache.
	CacheSize int
	// Snapshots, if set, gives the latest saved state to load before the
	// tail of the history.
	Snapshots SnapshotSource
	// States, if set, sees each state the executor reaches by an append.
	States StateObserver
	// Retries after a recoverable failure for commands without an
	// expected version; 0 means DefaultRetries, negative means none.
	Retries int
	// Backoff is the first retry's delay, doubled for each further one and
	// jittered; 0 means DefaultBackoff.
	Backoff time.Duration
	// Transient tells which store errors are worth a retry; nil means
	// IsTransient.
	Transient func(error) bool
	// Middleware wraps the processing of every aggregate type's commands,
	// outside each definition's own (see Middleware); the first is the
	// outermost. The engine sets it from its CommandMiddleware.
	Middleware []Middleware
}

// NewExecutor implements Type.
func (d *Definition[S]) NewExecutor(cfg ExecutorConfig) (Executor, error) {
	if cfg.Store == nil || cfg.Codec == nil {
		return nil, factum.IllegalArgument("aggregate processor: Store and Codec are required")
	}
	if err := d.Register(cfg.Codec); err != nil {
		return nil, err
	}
	for _, m := range cfg.Middleware {
		if m == nil {
			return nil, factum.IllegalArgument("aggregate processor: nil middleware")
		}
	}
	size := cfg.CacheSize
	if size == 0 {
		size = DefaultCacheSize
	}
	p := &processor[S]{
		def:       d,
		store:     cfg.Store,
		codec:     cfg.Codec,
		snapshots: cfg.Snapshots,
		states:    cfg.States,
		cache:     newCache[S](size),
		ids:       uuidv7.NewGenerator(),
	}
	// The store's front end skips the checks our own streams cannot fail.
	// A store embedding one of those, whose Append may do more, is
	// not one (built.Of).
	p.built = built.Of(cfg.Store)
	// A store that appends groups commits a run's commands together.
	p.group = built.GroupOf(cfg.Store)
	// The default Retry is fused with the processing: it gets the
	// attempt's report directly instead of through a context.
	pol := RetryConfig{Retries: cfg.Retries, Backoff: cfg.Backoff, Transient: cfg.Transient}.policy()
	p.run = chain(d.named, p.retried(pol), cfg.Middleware, d.middleware, []Middleware{Recover()})
	return p, nil
}

// retried is process under the default Retry (none for negative retries).
// It reports what its retries did not cure to a Retry middleware above.
func (p *processor[S]) retried(pol retryPolicy) CommandFunc {
	if pol.retries < 0 {
		return func(ctx context.Context, cmd *factum.Command) factum.Signal {
			sig, rep := p.process(ctx, cmd)
			reportRetry(ctx, rep)
			return sig
		}
	}
	return func(ctx context.Context, cmd *factum.Command) factum.Signal {
		return pol.run(ctx, func() (factum.Signal, report) { return p.process(ctx, cmd) })
	}
}

type processor[S any] struct {
	def       *Definition[S]
	store     eventstore.Store
	built     built.Appender      // store, if it appends built streams
	group     built.GroupAppender // store, if it appends groups of them
	codec     *codec.Registry
	snapshots SnapshotSource
	states    StateObserver
	cache     *cache[S]
	ids       *uuidv7.Generator
	// run is process inside the default Retry and the middleware chain.
	run CommandFunc
	// runs indexes the runs under way (see memberOf).
	runs runIndex[S]
	// workers runs the members of runs (see ProcessRun).
	workers workerPool
}

// outcome is one attempt's result.
type outcome struct {
	version   int
	at        time.Time // when the stream was made: the stage's time
	names     []string
	duplicate bool
	err       error
	// conflict: another writer moved the aggregate; a retry resolves it.
	conflict bool
	// retrySafe: nothing stands in the way of a retry; one helps if err
	// is a conflict or transient (Retry decides).
	retrySafe bool
}

// Process implements Processor: it runs the command through the
// middleware chain.
func (p *processor[S]) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	return p.run(ctx, cmd)
}

// process runs one attempt of cmd, and reports a failure a retry may cure.
func (p *processor[S]) process(ctx context.Context, cmd *factum.Command) (factum.Signal, report) {
	sig := processed(p.def.named, cmd)
	if cmd.AggregateID.NamedAggregate != p.def.named {
		fail(&sig, factum.IllegalArgument(fmt.Sprintf("command for %s sent to the processor of %s", cmd.AggregateID.NamedAggregate, p.def.named)))
		sig.SignalTime = time.Now()
		return sig, report{}
	}
	// The command's tenant rides in the context of everything the command
	// does: its handler and the effects the handler binds (a
	// prepare.PerTenant key reads it there).
	ctx = factum.ContextWithTenant(ctx, cmd.AggregateID.TenantOrDefault())
	var o outcome
	var m *runMember[S]
	if p.group != nil {
		// (Only an executor over a store appending groups runs groups.)
		m = p.memberOf(ctx, cmd)
	}
	if m != nil {
		o = m.attempt(ctx, cmd)
	} else {
		o = p.attempt(ctx, cmd)
	}
	if o.err != nil {
		var rep report
		if o.conflict || o.retrySafe {
			rep = report{conflict: o.conflict, err: o.err}
		}
		fail(&sig, o.err)
		sig.SignalTime = time.Now()
		return sig, rep
	}
	sig.Code = factum.CodeOk
	sig.AggregateVersion = o.version
	sig.EventNames = o.names
	sig.Duplicate = o.duplicate
	// An appended stream's create time stands for the moment the stage
	// was reached (microseconds apart), saving a clock read.
	sig.SignalTime = o.at
	if sig.SignalTime.IsZero() {
		sig.SignalTime = time.Now()
	}
	return sig, report{}
}

func fail(sig *factum.Signal, err error) {
	fe := factum.AsError(err)
	sig.Code = fe.Code
	sig.Message = factum.MessageOf(err)
	sig.Bindings = fe.Bindings
	if fe.Version != 0 && sig.AggregateVersion == 0 {
		sig.AggregateVersion = fe.Version
	}
}

// attempt runs the command once against the cached or loaded state.
func (p *processor[S]) attempt(ctx context.Context, cmd *factum.Command) outcome {
	o := CacheObserverFrom(ctx)
	po, _ := o.(PhaseObserver)
	e, err := p.checkout(ctx, cmd, o, po)
	if err != nil {
		return outcome{err: err, retrySafe: true}
	}
	dctx := startPhase(ctx, po, PhaseDecide)
	events, effs, err := p.def.decide(dctx, &e.st, cmd)
	endPhase(dctx, po, PhaseDecide, err)
	if err != nil {
		return p.rejected(ctx, cmd, e, err)
	}
	return p.decided(ctx, po, cmd, e, events, effs)
}

// decided ends an attempt whose handler decided events and effs on e's
// state: it applies the effects, builds the stream and appends it.
func (p *processor[S]) decided(ctx context.Context, po PhaseObserver, cmd *factum.Command, e *entry[S], events []any, effs []Effect) outcome {
	var applied *Applied
	var err error
	if len(effs) > 0 {
		ectx := startPhase(ctx, po, PhaseEffects)
		applied, err = ApplyEffects(ectx, effs)
		endPhase(ectx, po, PhaseEffects, err)
		if err != nil {
			return p.rejected(ctx, cmd, e, err)
		}
	}
	hw, _ := po.(HeaderWriter)
	stream, names, err := p.build(ctx, hw, cmd, &e.st, events)
	if err != nil {
		p.cache.put(e)
		return undone(ctx, applied, outcome{err: err})
	}
	actx := startPhase(ctx, po, PhaseAppend)
	if p.built != nil {
		err = p.built.AppendBuilt(actx, built.Mark(stream))
	} else {
		err = p.store.Append(actx, stream)
	}
	endPhase(actx, po, PhaseAppend, err)
	switch {
	case err == nil:
		// Appended: the bound effects stand.
		if !p.follow(e, stream, names, events) {
			// Appended, but the state cannot follow: reload next time.
			return outcome{version: stream.Version, names: names, at: stream.CreateTime}
		}
		if p.states != nil {
			if st, err := p.def.ToStored(e.st); err == nil {
				p.states.ObserveState(st)
			}
		}
		p.cache.put(e)
		return outcome{version: stream.Version, names: names, at: stream.CreateTime}
	case errors.Is(err, factum.ErrDuplicateRequestID):
		// The first attempt's stream holds the request; what this attempt
		// applied is not part of it.
		p.cache.put(e)
		if o, dup := p.duplicate(ctx, cmd); dup {
			return undone(ctx, applied, o)
		}
		return undone(ctx, applied, outcome{err: err})
	case errors.Is(err, factum.ErrEventVersionConflict),
		errors.Is(err, factum.ErrDuplicateAggregateID) && !cmd.IsCreate:
		// Another writer moved the aggregate: the cached state is stale.
		if cmd.ExpectedVersion > 0 {
			return undone(ctx, applied, outcome{err: factum.NewError(factum.CodeCommandExpectVersionConflict,
				fmt.Sprintf("command expects version %d, another command appended first", cmd.ExpectedVersion)).
				With(cmd.AggregateID, cmd.ExpectedVersion, cmd.ID, cmd.RequestIDOrID())})
		}
		return undone(ctx, applied, outcome{err: err, conflict: true})
	case errors.Is(err, factum.ErrTenantMismatch):
		// Another tenant's aggregate took the ID (a create racing it):
		// nothing was appended; answered as the gate answers another
		// tenant, revealing nothing.
		return undone(ctx, applied, outcome{err: OtherTenant(cmd)})
	case factum.CodeOf(err) != factum.CodeInternalServerError && factum.CodeOf(err) != factum.CodeRequestTimeout:
		// A definite refusal by the store (a create that lost): nothing
		// was appended. The state is dropped.
		return undone(ctx, applied, outcome{err: err})
	default:
		// The outcome is unknown: the write may have committed. The store
		// settles it; the state is dropped either way.
		return p.unknown(ctx, cmd, applied, err)
	}
}

// Process implements Executor by routing to the aggregate type's executor.
func (r router) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	if p, ok := r[cmd.AggregateID.NamedAggregate]; ok {
		return p.Process(ctx, cmd)
	}
	sig := factum.Signal{
		CommandID:   cmd.ID,
		RequestID:   cmd.RequestIDOrID(),
		Stage:       factum.StageProcessed,
		AggregateID: cmd.AggregateID,
		SignalTime:  time.Now(),
	}
	fail(&sig, factum.NotFound(fmt.Sprintf("no aggregate type %s is registered", cmd.AggregateID.NamedAggregate)))
	return sig
}
