package event

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// LogReader is the part of eventstore.Store a consumer reads. The consumer
// waits after a page shorter than its limit without reading the log's end
// again, so WaitLog must return at once when the log already holds a
// stream after the position (as eventstore.Store's WaitLog does), not only
// for appends made after the call.
type LogReader interface {
	ReadLog(ctx context.Context, after factum.Position, limit int) ([]factum.EventStream, error)
	WaitLog(ctx context.Context, after factum.Position) error
}

// Config configures a Consumer. Zero fields take the documented defaults.
type Config struct {
	// Log is the event store's global log. Required.
	Log LogReader
	// Checkpoints keeps the group's position. Required.
	Checkpoints CheckpointStore
	// Failures records failures after the in-place retries; nil means
	// failures are only logged and signalled.
	Failures FailureRecorder
	// Notify receives one signal per function and stream handled, success
	// or failure. It must not block for long; nil discards signals.
	Notify func(factum.Signal)
	// Attempts is how many times a failing function is tried in place
	// before its failure is recorded (default 3). Errors that say they are
	// not retryable (a Retryable() bool method returning false, or a
	// business rejection's code) are recorded after the first.
	Attempts int
	// Backoff is the wait before the second attempt, doubling after each
	// (default 10 ms).
	Backoff time.Duration
	// HandlerTimeout bounds one attempt (default 2 min).
	HandlerTimeout time.Duration
	// Middleware wraps every function the consumer runs, outside the
	// processor's and the function's own (see Middleware); the first is
	// the outermost. Attempts, Backoff and HandlerTimeout configure the
	// default middleware (Retry, Timeout and Recover) inside them all.
	Middleware []Middleware
	// BatchSize is how many streams are read at a time (default 256).
	BatchSize int
	// CheckpointStreams and CheckpointInterval batch the checkpoint's
	// saves: once streams are handled past the saved position, the
	// consumer saves, after the read in hand, when at least
	// CheckpointStreams of them are unsaved (default BatchSize) or the
	// first of them has waited CheckpointInterval (default 100 ms),
	// whichever comes first, and always when it stops.
	// Under load a read returns a few streams at a time, and a save per
	// read cost a commit per stream or two. The checkpoint still never
	// passes a stream left unhandled; a crash delivers again the streams
	// handled since the last save, at most CheckpointStreams or
	// CheckpointInterval's worth, as any crash between a stream and its
	// save always could. A negative CheckpointInterval saves after every
	// read that moved the position.
	CheckpointStreams  int
	CheckpointInterval time.Duration
	// PollInterval bounds how long the consumer waits for a wake-up
	// before reading the log again, a fallback for stores whose wake-ups
	// can be missed (default 1 s).
	PollInterval time.Duration
	// Concurrency is how many streams of different aggregates the
	// consumer may handle at once (default 1); one aggregate's streams are
	// always handled in order. Above 1 it is only for functions that
	// tolerate being given a stream again that they handled already: when
	// a failure cannot be recorded, or the consumer stops, in the middle of
	// a batch, streams handled after the first one left unhandled are
	// delivered again. Notify and Failures are then called from several
	// goroutines at once. The runtime's snapshotter, which the store's
	// version guard makes idempotent, uses it.
	Concurrency int
	// Logger receives errors (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time

	// WorkContext, if set, derives the context Run's work runs under from
	// the one Run makes (Run's values, never cancelled): the calls of its
	// functions, its checkpoint saves and its failure records; Redeliver's
	// calls do not get it. A caller that wraps the consumer uses it to mark
	// the consumer's own deliveries with a value, once per Run rather than
	// by a middleware per call (a context per call, and Timeout's shared
	// deadline lost).
	WorkContext func(context.Context) context.Context

	// Leases, if set, makes the consumer run its group only while it
	// holds the group's lease, so that instances sharing the store run
	// each group once: it takes the lease (waiting while another instance
	// holds it), renews it three times per LeaseTTL, saves its checkpoint
	// only under it (LeaseStore.SaveFencedCheckpoint), and releases it
	// when it stops or steps down. When it cannot renew, it starts no
	// stream once the lease could lapse (a fifth of the TTL before the
	// store lets another instance take it); a stream in hand then
	// finishes, so a handler that runs longer than that margin, or a
	// process stalled for longer (a
	// loaded machine, a paused VM), overlaps the next holder, which is
	// given the stream again (the checkpoint never passed it), with the
	// streams handled since the last save. What the lease's token fences
	// is the checkpoint: it moves under one holder at a time, never back,
	// and over each stream once; delivery stays at least once. With
	// Concurrency above 1 the check is made per batch.
	Leases LeaseStore
	// Holder names this instance to the lease store; a new ID if empty.
	Holder string
	// LeaseTTL is the lease's length (default 10 s): how long a dead
	// instance holds its groups up.
	LeaseTTL time.Duration
}

// DefaultCheckpointInterval is Config.CheckpointInterval's default.
const DefaultCheckpointInterval = 100 * time.Millisecond

// Consumer runs one Processor over the log as a consumer group.
type Consumer struct {
	proc *Processor
	cfg  Config
	// drain ends when Drain is called; it also wakes a consumer waiting
	// for appends, so a drain never waits out the poll interval.
	drain     context.Context
	drainDone context.CancelFunc
	// laneSeed spreads aggregates over the lanes of a concurrent batch.
	laneSeed maphash.Seed
	// recent holds the last failures, for FailureOn.
	recent recentFailures
	// funcs[i] is proc.handlers[i] inside its middleware chain.
	funcs []StreamFunc
}

// NewConsumer returns a consumer of p, with p's own settings (WithSettings)
// over cfg. It is an IllegalArgument error to omit Log or Checkpoints.
func NewConsumer(p *Processor, cfg Config) (*Consumer, error) {
	if p == nil || cfg.Log == nil || cfg.Checkpoints == nil {
		return nil, factum.IllegalArgument("event: a consumer needs a processor, a log and a checkpoint store")
	}
	cfg = p.settings.apply(cfg)
	if cfg.Attempts <= 0 {
		cfg.Attempts = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 10 * time.Millisecond
	}
	if cfg.HandlerTimeout <= 0 {
		cfg.HandlerTimeout = 2 * time.Minute
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 256
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.CheckpointStreams <= 0 {
		cfg.CheckpointStreams = cfg.BatchSize
	}
	if cfg.CheckpointInterval == 0 {
		cfg.CheckpointInterval = DefaultCheckpointInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Holder == "" {
		cfg.Holder = factum.NewID()
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = 10 * time.Second
	}
	for _, m := range cfg.Middleware {
		if m == nil {
			return nil, factum.IllegalArgument("event: a consumer's middleware must not be nil")
		}
	}
	defaults := []Middleware{Retry(cfg.Attempts, cfg.Backoff), Timeout(cfg.HandlerTimeout), Recover()}
	funcs := make([]StreamFunc, len(p.handlers))
	for i, h := range p.handlers {
		funcs[i] = wrap(h, cfg.Middleware, p.middleware, h.middleware, defaults)
	}
	drain, done := context.WithCancel(context.Background())
	return &Consumer{proc: p, cfg: cfg, drain: drain, drainDone: done, laneSeed: maphash.MakeSeed(), funcs: funcs}, nil
}

// Drain asks Run to return nil as soon as it has handled every stream in
// the log, instead of waiting for more. A runtime's shutdown uses it to
// finish the work already appended before it stops.
func (c *Consumer) Drain() { c.drainDone() }

// Processor returns the processor the consumer runs.
func (c *Consumer) Processor() *Processor { return c.proc }

// Run consumes the log until ctx ends (or, after Drain, until it has read
// the whole log), then finishes the stream in hand,
// saves the checkpoint and returns nil. It returns an error only when the
// checkpoint cannot be read at start. With Config.Leases it consumes only
// while it holds the group's lease (see Config.Leases); after Drain it
// returns at once while another instance holds it.
func (c *Consumer) Run(ctx context.Context) error {
	if c.cfg.Leases != nil {
		return c.runLeased(ctx)
	}
	return c.run(ctx, nil)
}

// run consumes the log, under fence when it is not nil: it stops, after
// the stream in hand, once the fence is no longer valid, and saves its
// checkpoint under the fence's lease.
func (c *Consumer) run(ctx context.Context, fence *leaseFence) error {
	group := c.proc.Name()
	pos, err := c.cfg.Checkpoints.Checkpoint(ctx, group)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("event: %s: read checkpoint: %w", group, err)
	}
	ck := checkpointBatch{saved: pos, streams: c.cfg.CheckpointStreams, interval: c.cfg.CheckpointInterval}
	// Work started on a stream finishes even when ctx ends, so that a stop
	// neither skips nor half-handles a stream.
	work := context.WithoutCancel(ctx)
	if c.cfg.WorkContext != nil {
		work = c.cfg.WorkContext(work)
	}
	save := func() {
		if ck.saved == pos {
			return
		}
		var err error
		if fence != nil {
			err = c.cfg.Leases.SaveFencedCheckpoint(work, fence.lease, pos)
			if errors.Is(err, ErrLeaseLost) {
				// Another instance holds the group now: stop after the
				// stream in hand; it resumes from the last fenced save.
				fence.lose()
			}
		} else {
			err = c.cfg.Checkpoints.SaveCheckpoint(work, group, pos)
		}
		if err != nil {
			c.cfg.Logger.Error("event: save checkpoint", "group", group.String(), "position", pos.String(), "err", err)
			return
		}
		ck.savedAt(pos)
	}
	defer save()
	// One lane's state per lane of a concurrent batch, kept from batch to
	// batch so that each lane keeps its deadline context; lane 0 also
	// handles the streams of a batch handled in order.
	lanes := make([]attemptDeadlines, max(c.cfg.Concurrency, 1))
	for l := range lanes {
		lanes[l].parent = work
	}
	release := func() {
		for l := range lanes {
			lanes[l].release()
		}
	}
	defer release()
	deadlines := &lanes[0]
	var lw laneWork // a concurrent batch's, reused
	failures := 0
	// The consumer reads on from its last position, so it may share a read
	// of the log's end with the other groups (see eventstore.Following),
	// except once draining: a drain ends on an empty read, which must show
	// every stream appended before it, so those reads are a plain reader's.
	follow := eventstore.Following(ctx)
	var idle *idleWait // made at the first wait: a consumer that never waits needs none
	for ctx.Err() == nil && fence.valid() {
		draining := c.drain.Err() != nil
		readCtx := follow
		if draining {
			readCtx = ctx
		}
		batch, err := c.cfg.Log.ReadLog(readCtx, pos, c.cfg.BatchSize)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failures++
			c.cfg.Logger.Error("event: read log", "group", group.String(), "err", err)
			sleep(ctx, backoff(c.cfg.Backoff, failures))
			continue
		}
		whole := true // every stream of batch handled
		if c.cfg.Concurrency > 1 && len(batch) >= 2*c.cfg.Concurrency {
			done, err := c.handleConcurrently(ctx, work, lanes, &lw, batch)
			if done > 0 {
				ck.handled(done, time.Now())
				pos = batch[done-1].Position
			}
			if err != nil {
				whole = false
				failures++
				c.cfg.Logger.Error("event: record failure", "group", group.String(), "stream", batch[done].ID, "err", err)
				sleep(ctx, backoff(c.cfg.Backoff, failures))
			} else if done < len(batch) {
				return nil // stopped
			} else {
				failures = 0
			}
		} else {
			for i := range batch {
				if ctx.Err() != nil || !fence.valid() {
					return nil
				}
				if err := c.handle(work, deadlines, &batch[i]); err != nil {
					// The failure could not be recorded: deliver the stream
					// again rather than lose it.
					whole = false
					failures++
					c.cfg.Logger.Error("event: record failure", "group", group.String(), "stream", batch[i].ID, "err", err)
					sleep(ctx, backoff(c.cfg.Backoff, failures))
					break
				}
				failures = 0
				ck.handled(1, time.Now())
				pos = batch[i].Position
			}
		}
		// A page shorter than BatchSize (an empty one too), handled whole,
		// reached the log's end when it was read: the consumer waits from
		// there rather than read an empty page first, as WaitLog returns at
		// once for a stream the store appended since (another process's
		// ends the wait as the store learns of it, as after an empty
		// page). After a full page more may follow, and a drain ends only
		// on an empty read made draining: a drain that began after the
		// read reads again.
		if !whole || len(batch) >= c.cfg.BatchSize || len(batch) > 0 && draining || !draining && c.drain.Err() != nil {
			if ck.due(pos, time.Now()) {
				save()
			}
			continue
		}
		wait := c.cfg.PollInterval
		if draining || ck.due(pos, time.Now()) {
			save()
		} else if left, dirty := ck.left(pos, time.Now()); dirty {
			wait = min(wait, left) // then save, if nothing came
		}
		if draining {
			return nil
		}
		if idle == nil {
			idle = newIdleWait(ctx, c.drain)
			defer idle.close()
		}
		if idle.wait(c.cfg.Log, pos, wait) {
			// Nothing came for a while: end the contexts the
			// functions were given.
			release()
		}
	}
	return nil
}

// handle runs every function of the processor that consumes s, each
// inside its middleware chain. It returns an error only when a failure
// could not be recorded.
func (c *Consumer) handle(ctx context.Context, lane *attemptDeadlines, s *factum.EventStream) error {
	for i, h := range c.proc.handlers {
		if !h.Wants(s) {
			continue
		}
		dctx, res := lane.start(s)
		err := c.funcs[i](dctx, s)
		attempts := max(res.attempts, 1)
		if err != nil && c.cfg.Failures != nil {
			f := Failure{
				Function: h.Function, Stage: h.Stage, Stream: *s,
				EventID: failedEventID(h, s, err), Err: err, Attempts: attempts, Time: c.cfg.Now(),
			}
			if rerr := c.cfg.Failures.RecordFailure(ctx, f); rerr != nil {
				return fmt.Errorf("%s on stream %s: %w (handler error: %v)", h.Function, s.ID, rerr, err)
			}
		}
		if err != nil {
			c.recent.add(s.ID, h.Function, err)
		}
		c.signal(h, s, res.take(), err)
	}
	return nil
}

// attemptDeadlines is one consumer lane's delivery state: the context a
// function's chain gets, which carries the results the function adds
// (AddResult), the attempts Retry makes and the stream's tenant, and the
// contexts that bound one attempt for Timeout. A timeout context per
// attempt (a timer and two allocations, then a cancel) cost more than a
// fast in-memory projection itself, so one context serves consecutive
// attempts as long as its deadline is at least the timeout less 1/64 of it
// away (the bound an attempt gets is between 98.4 % and 100 % of the
// timeout); a fresh one is made otherwise (the last one is cancelled
// then). A consumer that keeps up handles a stream or two per read, so the
// context also outlives its batch: it is cancelled when a new one replaces
// it, when the consumer's wait for appends times out (nothing came for
// PollInterval, or less when a checkpoint is due), and when Run returns. A
// function must therefore not use its context after it returned: it is not
// cancelled at once.
type attemptDeadlines struct {
	parent   context.Context
	timeout  time.Duration // the one ctx was made for
	ctx      context.Context
	cancel   context.CancelFunc
	deadline time.Time

	// The results of the function running, reused, emptied, for each
	// function; resCtx is resBase (the deadline context) carrying them,
	// for the same reason.
	res     *results
	resBase context.Context
	resCtx  context.Context

	// tenant is the tenant of the stream in hand, cur its contexts (one
	// of tenants, the lane's per tenant it met) and outer cur's outer,
	// what a chain gets: a lane's streams get their tenant's contexts
	// without an allocation each.
	tenant  string
	cur     *tenantLane
	tenants map[string]*tenantLane
	outer   context.Context
}

// start returns the context for one delivery of s to a function, carrying
// s's tenant, and its results, emptied.
func (d *attemptDeadlines) start(s *factum.EventStream) (context.Context, *results) {
	if d.res == nil {
		d.res = &results{lane: d}
	} else {
		d.res.take() // what an earlier function left unsent
	}
	d.res.attempts = 0
	if t := s.AggregateID.TenantOrDefault(); d.cur == nil || t != d.tenant {
		d.tenant, d.cur = t, d.tenantLane(t)
	}
	d.outer = d.cur.outer
	return d.outer, d.res
}

// bounded returns the context for one attempt bounded by timeout, carrying
// the lane's results and the stream's tenant.
func (d *attemptDeadlines) bounded(timeout time.Duration) context.Context {
	base := d.get(timeout)
	if d.resBase != base {
		d.resCtx = context.WithValue(base, resultKey{}, d.res)
		d.resBase = base
	}
	return d.cur.bounded(d.resCtx, d.tenant)
}

func (d *attemptDeadlines) get(timeout time.Duration) context.Context {
	if d.ctx == nil || d.timeout != timeout || time.Until(d.deadline) < timeout-timeout/64 {
		d.release()
		d.ctx, d.cancel = context.WithTimeout(d.parent, timeout)
		d.deadline, _ = d.ctx.Deadline()
		d.timeout = timeout
	}
	return d.ctx
}

// release cancels the current context, if any.
func (d *attemptDeadlines) release() {
	if d.cancel != nil {
		d.cancel()
		d.ctx, d.cancel = nil, nil
	}
}

// retryable reports whether trying a failed function again in place may
// help: as the error says, if it has a Retryable() bool method (a saga's
// refused command says no); otherwise not for business rejections.
func retryable(err error) bool {
	var r interface{ Retryable() bool }
	if errors.As(err, &r) {
		return r.Retryable()
	}
	switch factum.CodeOf(err) {
	case factum.CodeIllegalArgument, factum.CodeIllegalState, factum.CodeBadRequest, factum.CodeNotFound:
		return false
	}
	return true
}

func (c *Consumer) signal(h *Handler, s *factum.EventStream, result map[string]any, err error) {
	if c.cfg.Notify == nil {
		return
	}
	sig := factum.Signal{
		CommandID: s.CommandID, RequestID: s.RequestID, Stage: h.Stage, Function: h.Function,
		AggregateID: s.AggregateID, AggregateVersion: s.Version, Code: factum.CodeOk, SignalTime: c.cfg.Now(),
		Results: result, Origin: s.Header[factum.OriginHeader], OriginWait: factum.OriginWait(s.Header),
	}
	if err != nil {
		fe := factum.AsError(err)
		sig.Code, sig.Message, sig.Bindings = fe.Code, factum.MessageOf(err), fe.Bindings
	}
	c.cfg.Notify(sig)
}

// Invoke calls h once for s under timeout, with s's tenant in its context
// (factum.ContextWithTenant), turning a panic into an
// InternalServerError. The compensation scheduler uses it to re-deliver a
// stream to one function.
func Invoke(ctx context.Context, h *Handler, s *factum.EventStream, timeout time.Duration) error {
	ctx = factum.ContextWithTenant(ctx, s.AggregateID.TenantOrDefault())
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return invoke(ctx, h, s)
}

// invoke calls h once for s, turning a panic into an InternalServerError.
func invoke(ctx context.Context, h *Handler, s *factum.EventStream) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = factum.Errorf(factum.CodeInternalServerError, "event function %s panicked: %v\n%s", h.Function, r, debug.Stack())
		}
	}()
	return h.Handle(ctx, s)
}

// EventError attributes a function's error to one event of the stream.
// Functions added with On return it, so a failure names the event to
// re-deliver. An EventID that is not an event of the stream is not
// trusted: the failure is charged to the first event the function
// consumes.
type EventError struct {
	// EventID is the event that failed.
	EventID string
	// Err is the function's error.
	Err error
}

func (e *EventError) Error() string { return fmt.Sprintf("event %s: %v", e.EventID, e.Err) }

// Unwrap returns Err.
func (e *EventError) Unwrap() error { return e.Err }

// failedEventID returns the event of s a failure of h is charged to: the
// one err names (an *EventError) when it is an event of s, else the first
// h consumes. An ID that is not s's is a mistake of the function's:
// charged to it, the failure would be retried as another event's, or
// refused (an ID that is no event's).
func failedEventID(h *Handler, s *factum.EventStream, err error) string {
	if ee, ok := errors.AsType[*EventError](err); ok && ee.EventID != "" {
		for i := range s.Events {
			if s.Events[i].ID == ee.EventID {
				return ee.EventID
			}
		}
	}
	for i := range s.Events {
		if h.Consumes(s.AggregateID.NamedAggregate, s.Events[i].Name) {
			return s.Events[i].ID
		}
	}
	return ""
}

func backoff(base time.Duration, n int) time.Duration {
	d := base << min(n, 10)
	return min(d, 5*time.Second)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
