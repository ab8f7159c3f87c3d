package command

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/factum-go/factum"
)

// ErrClosed is the cause of the error a dispatcher returns once it stopped
// admitting commands (it is shutting down or shut down) and of the failed
// PROCESSED signal of an accepted command the shutdown deadline cut off.
// Both carry the code TooManyRequests: the command was not processed, and
// sending it again (to a running instance) is safe. It is factum.ErrClosed.
var ErrClosed = factum.ErrClosed

// ErrNotStarted is the cause of the error a dispatcher returns before Start.
var ErrNotStarted = errors.New("command dispatcher is not started")

// DefaultMaxRun is the default of DispatcherConfig.MaxRun.
const DefaultMaxRun = 64

// DispatcherConfig configures a Dispatcher.
type DispatcherConfig struct {
	// Lanes is the number of lanes; 0 means 16 × GOMAXPROCS. Commands run
	// in parallel across lanes; each lane runs one aggregate's commands
	// one at a time or as one run (see MaxRun).
	Lanes int
	// QueueSize bounds each lane's queue; 0 means 1024. Besides its queue
	// a lane holds the commands it is processing: one, or a run of up to
	// MaxRun.
	QueueSize int
	// MaxRun bounds the commands a lane takes from its queue at once when
	// the executor is a RunExecutor that takes runs: the lane takes what is queued without
	// waiting for more, up to MaxRun, hands each aggregate's commands among
	// them to ProcessRun as one run, the runs of different aggregates
	// concurrently, and takes more once all are done. 0 means
	// DefaultMaxRun; 1 takes one command at a time, as for any other
	// executor.
	MaxRun int
	// RejectWhenFull makes Send fail at once with TooManyRequests when the
	// lane's queue is full, instead of waiting for room until its context
	// ends.
	RejectWhenFull bool
}

// Dispatcher is the in-process Bus: it routes each command to a lane by its
// aggregate, so one aggregate's commands take effect one after another in
// arrival order (one at a time, or as a run, see MaxRun) and different
// aggregates run in parallel, and hands each outcome to a Sink, in arrival
// order for one aggregate. Queues are bounded: a full lane is back-pressure or TooManyRequests,
// never unbounded memory.
type Dispatcher struct {
	proc   Executor
	runs   RunExecutor // proc, when it processes runs and MaxRun > 1
	maxRun int
	emitAt func(int, factum.Signal)
	skipAt func(*factum.Command) (factum.Signal, bool)
	sink   Sink
	seed   maphash.Seed
	lanes  []lane
	reject bool

	started  atomic.Bool
	closed   atomic.Bool
	busy     atomic.Int64  // commands accepted and not yet processed
	finished atomic.Uint64 // commands processed (or dropped) since Start
	stopping chan struct{} // closed when admission stops

	runCtx  context.Context // processing context, cancelled at the deadline
	cancel  context.CancelFunc
	aborted atomic.Bool // past the shutdown deadline
	wg      sync.WaitGroup
	once    sync.Once
	dropped atomic.Int64
}

// lane is one lane's queue. mu guards sending on q against its closing:
// senders hold it shared, Shutdown exclusively to close q. A lock per lane
// (padded to its own cache line) keeps senders to different lanes from
// contending on one shared counter.
type lane struct {
	mu sync.RWMutex
	q  chan *factum.Command
	_  [64 - 32]byte
}

// NewDispatcher returns a dispatcher that runs commands with proc and emits
// their PROCESSED signals into sink. Call Start before sending.
func NewDispatcher(proc Executor, sink Sink, cfg DispatcherConfig) (*Dispatcher, error) {
	if proc == nil || sink == nil {
		return nil, factum.IllegalArgument("dispatcher: processor and sink are required")
	}
	if cfg.Lanes < 0 || cfg.QueueSize < 0 || cfg.MaxRun < 0 {
		return nil, factum.IllegalArgument("dispatcher: negative lanes, queue size or run")
	}
	lanes := cfg.Lanes
	if lanes == 0 {
		lanes = 16 * runtime.GOMAXPROCS(0)
	}
	qs := cfg.QueueSize
	if qs == 0 {
		qs = 1024
	}
	d := &Dispatcher{
		proc:     proc,
		sink:     sink,
		seed:     maphash.MakeSeed(),
		lanes:    make([]lane, lanes),
		reject:   cfg.RejectWhenFull,
		stopping: make(chan struct{}),
		maxRun:   1,
	}
	if r, ok := proc.(RunExecutor); ok && cfg.MaxRun != 1 && r.TakesRuns() {
		d.runs, d.maxRun = r, cfg.MaxRun
		if d.maxRun == 0 {
			d.maxRun = DefaultMaxRun
		}
	}
	d.emitAt = func(_ int, sig factum.Signal) { d.emit(sig) }
	d.skipAt = d.skip
	for i := range d.lanes {
		d.lanes[i].q = make(chan *factum.Command, qs)
	}
	return d, nil
}

// Start starts the lanes. Commands are processed with a context derived
// from ctx without its cancellation: processing stops at Shutdown's
// deadline, not when the starter's context ends. Start is idempotent.
func (d *Dispatcher) Start(ctx context.Context) {
	d.once.Do(func() {
		d.runCtx, d.cancel = context.WithCancel(context.WithoutCancel(ctx))
		for i := range d.lanes {
			d.wg.Add(1)
			go d.run(d.lanes[i].q)
		}
		d.started.Store(true)
	})
}

func (d *Dispatcher) run(q chan *factum.Command) {
	defer d.wg.Done()
	if d.runs == nil {
		for cmd := range q {
			d.one(cmd)
		}
		return
	}
	var r laneRun
	for cmd := range q {
		batch := append(r.batch[:0], cmd)
	drain:
		for len(batch) < d.maxRun {
			select {
			case c, ok := <-q:
				if !ok {
					break drain
				}
				batch = append(batch, c)
			default:
				break drain
			}
		}
		r.batch = batch
		if len(batch) == 1 {
			d.one(cmd)
		} else {
			d.processRuns(r.split(batch))
			// The senders the run's signals woke queue their next
			// commands before the lane looks: the next run is the
			// longer.
			runtime.Gosched()
		}
		clear(r.batch) // the commands are the sink's and the senders' now
	}
}

// one processes a single command, or gives it the closed signal past the
// shutdown deadline.
func (d *Dispatcher) one(cmd *factum.Command) {
	if d.aborted.Load() {
		d.drop(cmd)
		return
	}
	d.emit(d.proc.Process(d.runCtx, cmd))
}

// emit hands the signal of a processed command to the sink and counts the
// command finished.
func (d *Dispatcher) emit(sig factum.Signal) {
	d.sink.Signal(sig)
	d.finished.Add(1)
	d.busy.Add(-1)
}

// drop gives a command the shutdown deadline cut off its closed signal.
func (d *Dispatcher) drop(cmd *factum.Command) {
	d.dropped.Add(1)
	d.emit(closedSignal(cmd))
}

func closedSignal(cmd *factum.Command) factum.Signal {
	return factum.Signal{
		CommandID:   cmd.ID,
		RequestID:   cmd.RequestIDOrID(),
		Stage:       factum.StageProcessed,
		AggregateID: cmd.AggregateID,
		Code:        factum.CodeTooManyRequests,
		Message:     "shut down before the command was processed; it was not appended",
		SignalTime:  time.Now(),
	}
}

// lane returns the lane of an aggregate.
func (d *Dispatcher) lane(id *factum.AggregateID) *lane {
	var h maphash.Hash
	h.SetSeed(d.seed)
	h.WriteString(id.Aggregate)
	h.WriteByte(0)
	h.WriteString(id.ID)
	return &d.lanes[h.Sum64()%uint64(len(d.lanes))]
}

// Send implements Bus: it queues cmd on its aggregate's lane. When the lane
// is full it waits for room until ctx ends (TooManyRequests wrapping ctx's
// error), or fails at once with TooManyRequests if configured so. After
// Shutdown began it fails with TooManyRequests wrapping ErrClosed. The
// dispatcher owns cmd afterwards.
func (d *Dispatcher) Send(ctx context.Context, cmd *factum.Command) error {
	if !d.started.Load() {
		return factum.Errorf(factum.CodeIllegalState, "%w", ErrNotStarted)
	}
	ln := d.lane(&cmd.AggregateID)
	ln.mu.RLock()
	defer ln.mu.RUnlock()
	if d.closed.Load() {
		return factum.Errorf(factum.CodeTooManyRequests, "%w: not accepting commands", ErrClosed)
	}
	q := ln.q
	// Counted before the lane can take it, so that Idle never misses it.
	d.busy.Add(1)
	select {
	case q <- cmd:
		return nil
	default:
	}
	if d.reject {
		d.busy.Add(-1)
		return factum.NewError(factum.CodeTooManyRequests, "command lane is full").With(cmd.AggregateID, 0, cmd.ID, cmd.RequestIDOrID())
	}
	select {
	case q <- cmd:
		return nil
	case <-ctx.Done():
		d.busy.Add(-1)
		return factum.Errorf(factum.CodeTooManyRequests, "command lane stayed full: %w", ctx.Err())
	case <-d.stopping:
		d.busy.Add(-1)
		return factum.Errorf(factum.CodeTooManyRequests, "%w: not accepting commands", ErrClosed)
	}
}

// Idle reports whether every command the dispatcher accepted has been
// processed.
func (d *Dispatcher) Idle() bool { return d.busy.Load() == 0 }

// Done returns how many commands the lanes have finished since Start: a
// shutdown compares two readings to learn whether anything ran between.
func (d *Dispatcher) Done() uint64 { return d.finished.Load() }

// Pending returns the number of queued commands not yet taken by a lane.
func (d *Dispatcher) Pending() int {
	n := 0
	for i := range d.lanes {
		n += len(d.lanes[i].q)
	}
	return n
}

// Shutdown stops admission at once (Send fails with ErrClosed), lets the
// lanes finish every accepted command in order, and returns when they are
// done. If ctx ends first, the commands in progress on each lane are
// cancelled, the queued ones and those of a run not yet started get a
// failed PROCESSED signal (TooManyRequests, ErrClosed: not appended), as
// one at a time, and Shutdown returns an error wrapping ctx's.
// Shutdown of a dispatcher never started only closes it.
func (d *Dispatcher) Shutdown(ctx context.Context) error {
	if d.closed.Swap(true) {
		return factum.Errorf(factum.CodeIllegalState, "%w: already shut down", ErrClosed)
	}
	close(d.stopping)
	for i := range d.lanes {
		ln := &d.lanes[i]
		ln.mu.Lock() // waits for senders between their check and their send
		close(ln.q)
		ln.mu.Unlock()
	}
	if !d.started.Load() {
		return nil
	}
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		d.cancel()
		return nil
	case <-ctx.Done():
	}
	d.aborted.Store(true)
	d.cancel()
	<-done
	return fmt.Errorf("command dispatcher: shutdown deadline passed, %d queued commands not processed: %w", d.dropped.Load(), ctx.Err())
}
