package projection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// Config configures a Runner. Log and Store are required; zero fields take
// the defaults.
type Config struct {
	// Log is the event store's global log.
	Log event.LogReader
	// Store is the read model's database, holding the checkpoint too.
	Store Store
	// Failures records a stream the function keeps failing on, before the
	// runner moves past it; nil means the runner never moves past a
	// failing stream (it retries it, with backoff, until it succeeds).
	Failures event.FailureRecorder
	// Notify receives a PROJECTED signal per stream projected (after its
	// transaction committed) or recorded as failed. It must not block for
	// long; nil discards signals.
	Notify func(factum.Signal)
	// BatchSize is how many streams one transaction holds (default 64).
	BatchSize int
	// Attempts is how many times a batch is tried while the same stream
	// fails before that stream's failure is recorded (default 3).
	Attempts int
	// Backoff is the wait after the first failed attempt, doubling after
	// each (default 10 ms, at most 5 s).
	Backoff time.Duration
	// PollInterval bounds how long the runner waits for a wake-up before
	// reading the log again (default 1 s).
	PollInterval time.Duration
	// Logger receives errors (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock of signals and failures (default time.Now).
	Now func() time.Time
	// Middleware wraps the projection's function, the first outermost, as
	// an event function of the projection's group at the PROJECTED stage
	// (telemetry's Events, for one): it sees each stream projected and the
	// function's error. The transaction reaches the function unchanged.
	Middleware []event.Middleware
}

// Runner runs one projection over the log as a consumer group whose
// checkpoint lives in the read model's database.
type Runner struct {
	p   *Projection
	cfg Config
	// project is the projection's function inside cfg.Middleware.
	project Func

	mu        sync.Mutex // one transaction at a time: batches and Rebuild
	setupDone bool
	// pos is the checkpoint as this runner last saw it committed, when
	// posKnown: the next batch is read from it before a transaction opens.
	pos      factum.Position
	posKnown bool
	failing  string // the stream that failed last, and how often
	failures int

	drain     context.Context
	drainDone context.CancelFunc
}

// NewRunner returns a runner of p.
func NewRunner(p *Projection, cfg Config) (*Runner, error) {
	if p == nil || cfg.Log == nil || cfg.Store == nil {
		return nil, factum.IllegalArgument("projection: a runner needs a projection, a log and a store")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 10 * time.Millisecond
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Runner{p: p, cfg: cfg, project: withMiddleware(p, cfg.Middleware)}
	r.drain, r.drainDone = context.WithCancel(context.Background())
	return r, nil
}

// Drain makes Run return once it has projected the whole log.
func (r *Runner) Drain() { r.drainDone() }

// Run projects the log from the checkpoint until ctx ends (or, after
// Drain, until the log is projected). A batch in hand when ctx ends rolls
// back: nothing of it is kept, and it is projected again on the next run.
func (r *Runner) Run(ctx context.Context) error {
	errs := 0
	for ctx.Err() == nil {
		n, pos, err := r.step(ctx)
		if errors.Is(err, errMoved) {
			continue // another runner moved the checkpoint: read from there
		}
		if err != nil {
			r.posKnown = false
			if ctx.Err() != nil {
				return nil
			}
			errs++
			r.cfg.Logger.Error("projection: batch", "projection", r.p.group.String(), "err", err)
			sleep(ctx, backoff(r.cfg.Backoff, errs))
			continue
		}
		errs = 0
		if n > 0 {
			continue
		}
		if r.drain.Err() != nil {
			return nil
		}
		wctx, cancel := context.WithTimeout(ctx, r.cfg.PollInterval)
		stop := context.AfterFunc(r.drain, cancel)
		_ = r.cfg.Log.WaitLog(wctx, pos)
		stop()
		cancel()
	}
	return nil
}

// Rebuild empties the read model and removes the checkpoint in one
// transaction, so the projection starts again from the log's beginning:
// a running Run replays it, or the next one does. Readers see the model
// fill up again as it replays.
func (r *Runner) Rebuild(ctx context.Context) error {
	if r.p.reset == nil {
		return factum.IllegalArgument(fmt.Sprintf("projection %s has no Reset function", r.p.group))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ensureSetup(ctx); err != nil {
		return err
	}
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return fmt.Errorf("projection %s: rebuild: %w", r.p.group, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := r.p.reset(ctx, tx); err != nil {
		return fmt.Errorf("projection %s: reset: %w", r.p.group, err)
	}
	if err := tx.DeleteCheckpoint(ctx, r.p.group); err != nil {
		return fmt.Errorf("projection %s: rebuild: %w", r.p.group, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("projection %s: rebuild: %w", r.p.group, err)
	}
	r.posKnown = false
	return nil
}

// step projects one batch: it returns how many streams it moved past and
// the checkpoint after them.
func (r *Runner) step(ctx context.Context) (int, factum.Position, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ensureSetup(ctx); err != nil {
		return 0, factum.Position{}, err
	}
	tx, pos, batch, err := r.begin(ctx)
	if err != nil || len(batch) == 0 {
		return 0, pos, err
	}
	failed, ferr := r.apply(ctx, tx, batch)
	if ferr == nil {
		if err := r.commit(ctx, tx, batch[len(batch)-1].Position); err != nil {
			return 0, pos, err
		}
		r.signalAll(batch, nil)
		r.failing, r.failures = "", 0
		return len(batch), batch[len(batch)-1].Position, nil
	}
	_ = tx.Rollback(context.WithoutCancel(ctx))
	if ctx.Err() != nil {
		return 0, pos, ctx.Err()
	}
	s := &batch[failed]
	if r.failing != s.ID {
		r.failing, r.failures = s.ID, 0
	}
	r.failures++
	if failed > 0 {
		// The streams before the failing one commit on their own, so a
		// failing stream holds up only itself and what follows it.
		if err := r.commitPrefix(ctx, pos, batch[:failed]); err != nil {
			return 0, pos, err
		}
		return failed, batch[failed-1].Position, nil
	}
	if r.failures < r.cfg.Attempts || r.cfg.Failures == nil {
		return 0, pos, fmt.Errorf("projection %s: stream %s: %w", r.p.group, s.ID, ferr)
	}
	return r.pass(ctx, pos, s, ferr)
}

// ensureSetup creates the projection's tables in a transaction of its own,
// once per runner.
func (r *Runner) ensureSetup(ctx context.Context) error {
	if r.setupDone || r.p.setup == nil {
		return nil
	}
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return fmt.Errorf("projection %s: begin: %w", r.p.group, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := r.p.setup(ctx, tx); err != nil {
		return fmt.Errorf("projection %s: setup: %w", r.p.group, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("projection %s: setup: %w", r.p.group, err)
	}
	r.setupDone = true
	return nil
}

// begin reads the next batch after the checkpoint, then starts a
// transaction holding the checkpoint at the position the batch follows
// (locked, where the store locks it, so runners of one projection take
// turns). No transaction is open while the log is read: a runner never
// holds a pooled connection while it waits for another. A checkpoint that
// moved meanwhile (another runner, a rebuild) is errMoved.
func (r *Runner) begin(ctx context.Context) (Txn, factum.Position, []factum.EventStream, error) {
	if !r.posKnown {
		tx, err := r.cfg.Store.Begin(ctx)
		if err != nil {
			return nil, factum.Position{}, nil, fmt.Errorf("projection %s: begin: %w", r.p.group, err)
		}
		pos, err := tx.Checkpoint(ctx, r.p.group)
		_ = tx.Rollback(context.WithoutCancel(ctx))
		if err != nil {
			return nil, factum.Position{}, nil, fmt.Errorf("projection %s: checkpoint: %w", r.p.group, err)
		}
		r.pos, r.posKnown = pos, true
	}
	pos := r.pos
	batch, err := r.cfg.Log.ReadLog(ctx, pos, r.cfg.BatchSize)
	if err != nil {
		return nil, pos, nil, fmt.Errorf("projection %s: read log: %w", r.p.group, err)
	}
	if len(batch) == 0 {
		return nil, pos, nil, nil
	}
	tx, err := r.at(ctx, pos)
	if err != nil {
		return nil, pos, nil, err
	}
	return tx, pos, batch, nil
}

// errMoved reports that the checkpoint is not where this runner read the
// log from: the batch is read again from where it is.
var errMoved = errors.New("projection: the checkpoint moved")

// at starts a transaction and checks, under the store's lock of the
// checkpoint, that it is at pos.
func (r *Runner) at(ctx context.Context, pos factum.Position) (Txn, error) {
	tx, err := r.cfg.Store.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("projection %s: begin: %w", r.p.group, err)
	}
	got, err := tx.Checkpoint(ctx, r.p.group)
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("projection %s: checkpoint: %w", r.p.group, err)
	}
	if got != pos {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		r.pos = got
		return nil, errMoved
	}
	return tx, nil
}

// apply runs the function for every stream of the batch it consumes. On a
// failure it returns the failing stream's index.
func (r *Runner) apply(ctx context.Context, tx Txn, batch []factum.EventStream) (int, error) {
	for i := range batch {
		if !r.p.wants(&batch[i]) {
			continue
		}
		if err := r.invoke(ctx, tx, &batch[i]); err != nil {
			return i, err
		}
	}
	return 0, nil
}

// invoke calls the function, turning a panic into an InternalServerError.
func (r *Runner) invoke(ctx context.Context, tx Tx, s *factum.EventStream) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = factum.Errorf(factum.CodeInternalServerError, "projection %s panicked: %v\n%s", r.p.group, v, debug.Stack())
		}
	}()
	return r.project(ctx, tx, s)
}

// commit saves the checkpoint at pos in tx and commits it.
func (r *Runner) commit(ctx context.Context, tx Txn, pos factum.Position) error {
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := tx.SaveCheckpoint(ctx, r.p.group, pos); err != nil {
		return fmt.Errorf("projection %s: save checkpoint: %w", r.p.group, err)
	}
	if err := tx.Commit(ctx); err != nil {
		r.posKnown = false
		return fmt.Errorf("projection %s: commit: %w", r.p.group, err)
	}
	r.pos, r.posKnown = pos, true
	return nil
}

// commitPrefix projects streams, which follow from and which the function
// handled without failing a moment ago, in a transaction of their own and
// commits it.
func (r *Runner) commitPrefix(ctx context.Context, from factum.Position, streams []factum.EventStream) error {
	tx, err := r.at(ctx, from)
	if err != nil {
		return err
	}
	if _, err := r.apply(ctx, tx, streams); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return fmt.Errorf("projection %s: stream %s: %w", r.p.group, streams[len(streams)-1].ID, err)
	}
	if err := r.commit(ctx, tx, streams[len(streams)-1].Position); err != nil {
		return err
	}
	r.signalAll(streams, nil)
	return nil
}

// pass records the failure of a stream the function keeps failing on, the
// first after from, then moves the checkpoint past it in a transaction
// without its writes.
func (r *Runner) pass(ctx context.Context, from factum.Position, s *factum.EventStream, ferr error) (int, factum.Position, error) {
	eventID := ""
	for i := range s.Events {
		if r.p.Consumes(s.AggregateID.NamedAggregate, s.Events[i].Name) {
			eventID = s.Events[i].ID
			break
		}
	}
	f := event.Failure{
		Function: r.p.Function(), Stage: factum.StageProjected, Stream: *s, EventID: eventID,
		Err: ferr, Attempts: r.failures, Time: r.cfg.Now(),
	}
	if err := r.cfg.Failures.RecordFailure(ctx, f); err != nil {
		return 0, factum.Position{}, fmt.Errorf("projection %s: record the failure of stream %s: %w", r.p.group, s.ID, err)
	}
	tx, err := r.at(ctx, from)
	if err != nil {
		return 0, factum.Position{}, err
	}
	if err := r.commit(ctx, tx, s.Position); err != nil {
		return 0, factum.Position{}, err
	}
	r.signal(s, ferr)
	r.failing, r.failures = "", 0
	return 1, s.Position, nil
}

func (r *Runner) signalAll(batch []factum.EventStream, err error) {
	for i := range batch {
		if r.p.wants(&batch[i]) {
			r.signal(&batch[i], err)
		}
	}
}

func (r *Runner) signal(s *factum.EventStream, err error) {
	if r.cfg.Notify == nil {
		return
	}
	sig := factum.Signal{
		CommandID: s.CommandID, RequestID: s.RequestID, Stage: factum.StageProjected, Function: r.p.Function(),
		AggregateID: s.AggregateID, AggregateVersion: s.Version, Code: factum.CodeOk, SignalTime: r.cfg.Now(),
		Origin: s.Header[factum.OriginHeader],
	}
	if err != nil {
		fe := factum.AsError(err)
		sig.Code, sig.Message, sig.Bindings = fe.Code, factum.MessageOf(err), fe.Bindings
	}
	r.cfg.Notify(sig)
}

func backoff(base time.Duration, failures int) time.Duration {
	d := base << min(failures-1, 16)
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
