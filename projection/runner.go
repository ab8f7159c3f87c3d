package projection

import (
	"context"
	"errors"
	"log/slog"
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
	// reading the log (and the builds' state) again (default 1 s).
	PollInterval time.Duration
	// CheckpointInterval bounds how long the runner leaves unsaved its
	// progress over batches holding no stream the projection consumes
	// (default DefaultCheckpointInterval). Such a batch opens no
	// transaction: the runner reads on from its end and saves the
	// checkpoint past it with the next batch it applies, once the
	// interval has passed since the first unsaved one, when it reaches
	// the log's end during a Drain, or when a rebuild's build catches
	// up. A crash meanwhile leaves the checkpoint behind, before streams
	// the projection does not consume: they are read again, never
	// applied. A negative interval saves after every such batch.
	CheckpointInterval time.Duration
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
// checkpoint lives in the read model's database. A projection with a
// Schema has builds: the live one, which it keeps up to date, and during a
// rebuild a next one, which it fills from the log's start beside the live
// one and switches to once caught up.
type Runner struct {
	p   *Projection
	cfg Config
	// project is the projection's function inside cfg.Middleware.
	project Func

	mu sync.Mutex // one transaction at a time: batches, builds, retries
	// live is the lane of the build queries read; nil while that build
	// is of another schema version than this code's (a version-bump
	// rebuild is under way). next is the lane of the build being filled.
	live, next *lane

	wake      chan struct{} // Rebuild and ResetAndReplay wake Run
	drain     context.Context
	drainDone context.CancelFunc
}

// lane is a runner's progress through the log into one build.
type lane struct {
	build  Build
	group  factum.Function
	tables Tables
	// signals: whether the lane sends PROJECTED signals (the live build's,
	// or a version-bump build's, which will hold the projected streams
	// once it goes live).
	signals   bool
	setupDone bool
	// pos is the checkpoint as this lane last saw it committed, when
	// posKnown: the next batch is read from it before a transaction opens.
	pos      factum.Position
	posKnown bool
	// skipped, when not zero, is when the lane first read past pos
	// without saving: the streams after pos up to read hold nothing the
	// projection consumes, and the next batch is read from read.
	skipped  time.Time
	read     factum.Position
	caught   bool   // the last batch found the log's end
	failing  string // the stream that failed last, and how often
	failures int
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
	if cfg.CheckpointInterval == 0 {
		cfg.CheckpointInterval = DefaultCheckpointInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Runner{p: p, cfg: cfg, project: withMiddleware(p, cfg.Middleware), wake: make(chan struct{}, 1)}
	if p.version == 0 {
		r.live = &lane{group: p.group, tables: TablesOf(p, 0), signals: true}
	}
	r.drain, r.drainDone = context.WithCancel(context.Background())
	return r, nil
}

// Projection returns the runner's projection.
func (r *Runner) Projection() *Projection { return r.p }

// Drain makes Run return once it has projected the whole log into the
// live build (a rebuild under way goes on at the next Run).
func (r *Runner) Drain() { r.drainDone() }

// Run projects the log from the checkpoints until ctx ends (or, after
// Drain, until the log is projected). A batch in hand when ctx ends rolls
// back: nothing of it is kept, and it is projected again on the next run.
// With a Schema it first brings the builds' state in line with the code:
// the first run makes build 1 live; a live build of a lower schema version
// starts a rebuild into a build of this one (a higher one is left alone:
// see Rebuild); a build replaced by a switch has its tables dropped. A rebuild (Rebuild, or a version bump) fills the
// next build batch by batch between the live build's batches, and
// switches to it in one transaction once it is as far along the log as
// the live build.
func (r *Runner) Run(ctx context.Context) error {
	errs := 0
	for ctx.Err() == nil {
		// A drain ends on a round begun draining (its reads are a plain
		// reader's, see begin) that moved nothing.
		draining := r.drain.Err() != nil
		n, pos, err := r.round(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			errs++
			r.cfg.Logger.Error("projection: batch", "projection", r.p.group.String(), "err", err)
			sleep(ctx, backoff(r.cfg.Backoff, errs))
			continue
		}
		errs = 0
		if n > 0 || !draining && r.drain.Err() != nil {
			continue
		}
		if draining {
			return nil
		}
		wctx, cancel := context.WithTimeout(ctx, r.waitFor())
		stop := context.AfterFunc(r.drain, cancel)
		woken := make(chan struct{})
		go func() {
			defer close(woken)
			select {
			case <-r.wake:
				cancel()
			case <-wctx.Done():
			}
		}()
		_ = r.cfg.Log.WaitLog(wctx, pos)
		cancel()
		<-woken
		stop()
	}
	return nil
}

// round brings the lanes in line with the builds' state, then projects
// one batch into each: it returns how many streams they moved past and
// the live lane's checkpoint (where to wait on the log from).
func (r *Runner) round(ctx context.Context) (int, factum.Position, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p.version > 0 {
		if err := r.sync(ctx); err != nil {
			return 0, factum.Position{}, err
		}
	}
	total := 0
	var pos factum.Position
	var errs []error
	for _, l := range []*lane{r.live, r.next} {
		if l == nil {
			continue
		}
		n, p, err := r.laneStep(ctx, l)
		// A build replays the whole log: it takes a few batches per
		// round, between two of the live build's, to catch up with a log
		// that keeps growing.
		for k := 1; l == r.next && err == nil && n > 0 && k < nextBatches && ctx.Err() == nil; k++ {
			var m int
			m, p, err = r.laneStep(ctx, l)
			n += m
			if m == 0 {
				break
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		total += n
		if l == r.live {
			pos = p
		} else if r.live == nil {
			pos = p
		}
	}
	if len(errs) > 0 {
		return total, pos, errors.Join(errs...)
	}
	if r.next != nil && r.next.caught {
		switched, err := r.trySwitch(ctx)
		if err != nil {
			return total, pos, err
		}
		if switched {
			total++ // look again at once: drop the retired build
		}
	}
	return total, pos, nil
}

// nextBatches is how many batches a build takes per round at most.
const nextBatches = 8

// laneStep is step, retried at once while the checkpoint moved under it.
func (r *Runner) laneStep(ctx context.Context, l *lane) (int, factum.Position, error) {
	for {
		n, pos, err := r.step(ctx, l)
		if errors.Is(err, errMoved) {
			continue // another runner moved the checkpoint: read from there
		}
		if err != nil {
			l.posKnown = false
		}
		return n, pos, err
	}
}

// kick wakes Run from its wait.
func (r *Runner) kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
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
