package event

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
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
