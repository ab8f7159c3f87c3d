package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
)

// AppendResult is a writer's answer to one append. Writers never touch the
// caller's stream: the caller builds its error from its own stream.
type AppendResult struct {
	Outcome eventstore.Outcome
	Pos     factum.Position
	Err     error // why, for Failed
}

// AppendRequest is one append waiting for a writer.
type AppendRequest struct {
	Ctx      context.Context
	Row      EventRow
	Attempts int               // statements that left the row unexplained
	Done     chan AppendResult // buffered: a writer never blocks on a caller that left
}

// FlushFunc writes one batch with writer w and answers its callers,
// returning the requests to write again.
type FlushFunc[W any] func(w W, batch []*AppendRequest) (retry []*AppendRequest)

// Appender coalesces concurrent appends by group commit: an Append queues
// its request, then tries to take one of the writer slots. With a slot it
// writes everything queued (its own request among it, unless another
// writer took it first) in one batch; without one it waits, as a writer
// busy now takes the queue when it finishes. An uncontended append thus
// runs on its caller's goroutine, with no hand-off, and under load appends
// queue up while batches are in flight and are written together by the
// next.
//
// A second batch starts beside one in flight only once the queue holds as
// many requests as the last batch started; until then the queue waits for
// the writer in flight, which takes it when it finishes. Each statement
// and commit has a fixed cost, several times a row's: starting a writer
// for whatever is queued the moment one is free splits N concurrent
// callers into a cohort per writer plus one forming, where this rule
// keeps them in about two, each batch as large as the one before it. An
// append meeting no batch in flight is written at once.
//
// After a batch, if more is queued, the writer hands the queue to one of
// the appender's helper goroutines (one per writer, started at the first
// hand-off, ended by Close) and returns, so that a caller whose own
// request is done does not wait for other callers'. The helpers live as
// long as the appender, so a hand-off does not start a goroutine and grow
// its stack anew.
//
// An Appender is safe for concurrent use.
type Appender[W any] struct {
	d         *Dialect
	errClosed error
	maxBatch  int
	distinct  bool
	flush     FlushFunc[W]

	// mu guards closed against appends queueing and hand-offs while
	// Close drains.
	mu        sync.RWMutex
	closed    bool
	qmu       sync.Mutex
	queue     []*AppendRequest // appends waiting for a writer
	idle      []W              // the writers without a batch, most recently used last; under qmu
	lastBatch int              // the size of the last batch started; under qmu
	slots     chan struct{}    // one token per batch in flight
	handoff   chan struct{}    // wakes a helper to lead; closed by Close
	helpers   sync.Once        // starts the helpers
}

// NewAppender returns an appender writing through
// writers (one batch in flight per writer) with flush, at most maxBatch
// requests a batch; with distinct, a batch holds one request per
// aggregate, and a second stays queued for a later batch. errClosed is the
// error of an Append after Close.
func NewAppender[W any](d *Dialect, errClosed error, writers []W, maxBatch int, distinct bool, flush FlushFunc[W]) *Appender[W] {
	return &Appender[W]{d: d, errClosed: errClosed, maxBatch: maxBatch, distinct: distinct, flush: flush,
		idle: writers, slots: make(chan struct{}, len(writers)), handoff: make(chan struct{}, len(writers))}
}

// Append implements eventstore.Backend. Concurrent appends are written
// together; each caller still gets its own outcome.
//
// If ctx ends while the append is being written, Append returns ctx's
// error at once and the outcome is unknown (Lookup tells); an append whose
// ctx ends before it is written is never written.
func (a *Appender[W]) Append(ctx context.Context, es *factum.EventStream) (eventstore.Outcome, error) {
	row, err := EncodeStream(a.d, es)
	if err != nil {
		return eventstore.Failed, err
	}
	req := &AppendRequest{Ctx: ctx, Row: row, Done: make(chan AppendResult, 1)}
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return eventstore.Failed, a.errClosed
	}
	a.qmu.Lock()
	a.queue = append(a.queue, req)
	a.qmu.Unlock()
	a.mu.RUnlock()
	a.lead()
	select {
	case res := <-req.Done:
		switch res.Outcome {
		case eventstore.Appended:
			es.Position = res.Pos
			return eventstore.Appended, nil
		case eventstore.Failed:
			return eventstore.Failed, fmt.Errorf("%s: append %s version %d: %w", a.d.Name, es.AggregateID, es.Version, res.Err)
		default:
			return res.Outcome, nil
		}
	case <-ctx.Done():
		return eventstore.Failed, fmt.Errorf("%s: append %s version %d: outcome unknown: %w", a.d.Name, es.AggregateID, es.Version, ctx.Err())
	}
}

// lead writes batches while it holds a writer slot. After a batch, if more
// is queued, it hands the work to a helper and returns.
func (a *Appender[W]) lead() {
	for {
		if !a.startable() {
			return // a writer in flight takes the queue when it finishes
		}
		select {
		case a.slots <- struct{}{}:
		default:
			return // every writer is busy: the next to finish takes the queue
		}
		w := a.takeWriter()
		batch := a.take()
		if len(batch) > 0 {
			a.requeue(a.flush(w, batch))
		}
		a.putWriter(w)
		<-a.slots
		// A request queued while the slot was held found no slot, or
		// waited for this batch: look again now that it is free.
		if !a.pending() {
			return
		}
		if len(batch) > 0 {
			a.handOff()
			return
		}
	}
}

// startable reports whether a batch may start now: something is queued,
// and either no batch is in flight or the queue holds at least as many
// requests as the last batch started (see Appender). A writer in flight
// releases its slot before it looks at the queue, so a request this
// refuses is taken when that writer finishes.
func (a *Appender[W]) startable() bool {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	return len(a.queue) > 0 && (len(a.slots) == 0 || len(a.queue) >= a.lastBatch)
}

// handOff wakes a helper to lead, starting the helpers at the first call.
// After Close nothing is handed off: Close writes what is queued.
func (a *Appender[W]) handOff() {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		return
	}
	a.helpers.Do(func() {
		for range cap(a.handoff) {
			go a.help()
		}
	})
	select {
	case a.handoff <- struct{}{}:
	default: // as many hand-offs are due as there are helpers
	}
}

// help leads whenever a batch hands off, until Close.
func (a *Appender[W]) help() {
	for range a.handoff {
		a.lead()
	}
}

// take removes and returns up to maxBatch queued requests, oldest first;
// with distinct, of distinct aggregates (see NewAppender).
func (a *Appender[W]) take() []*AppendRequest {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if !a.distinct {
		n := min(len(a.queue), a.maxBatch)
		if n == 0 {
			return nil
		}
		a.lastBatch = n
		batch := make([]*AppendRequest, n)
		copy(batch, a.queue)
		rest := copy(a.queue, a.queue[n:])
		clear(a.queue[rest:])
		a.queue = a.queue[:rest]
		return batch
	}
	if len(a.queue) == 0 {
		return nil
	}
	batch := make([]*AppendRequest, 0, min(len(a.queue), a.maxBatch))
	var keys map[AggregateKey]struct{}
	if len(a.queue) > 1 {
		keys = make(map[AggregateKey]struct{}, cap(batch))
	}
	rest := a.queue[:0]
	for i, r := range a.queue {
		if len(batch) == a.maxBatch {
			rest = append(rest, a.queue[i:]...)
			break
		}
		if keys != nil {
			k := r.Row.Key()
			if _, dup := keys[k]; dup {
				rest = append(rest, r)
				continue
			}
			keys[k] = struct{}{}
		}
		batch = append(batch, r)
	}
	clear(a.queue[len(rest):])
	a.queue = rest
	a.lastBatch = len(batch)
	return batch
}

// takeWriter returns the idle writer used last, whose connection is the
// likeliest to be warm; the caller holds a slot, so there is one.
func (a *Appender[W]) takeWriter() W {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	w := a.idle[len(a.idle)-1]
	a.idle = a.idle[:len(a.idle)-1]
	return w
}

// putWriter returns a writer to the idle ones.
func (a *Appender[W]) putWriter(w W) {
	a.qmu.Lock()
	a.idle = append(a.idle, w)
	a.qmu.Unlock()
}

// requeue puts requests to write again at the head of the queue.
func (a *Appender[W]) requeue(rs []*AppendRequest) {
	if len(rs) == 0 {
		return
	}
	a.qmu.Lock()
	a.queue = append(rs, a.queue...)
	a.qmu.Unlock()
}

func (a *Appender[W]) pending() bool {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	return len(a.queue) > 0
}

// Queued returns how many appends wait for a writer.
func (a *Appender[W]) Queued() int {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	return len(a.queue)
}

// WithWriter runs fn with a writer, holding its slot, as a batch would;
// after it, the queue is written as after a batch.
func (a *Appender[W]) WithWriter(fn func(w W)) {
	a.slots <- struct{}{}
	w := a.takeWriter()
	defer func() {
		a.putWriter(w)
		<-a.slots
		if a.pending() {
			a.lead()
		}
	}()
	fn(w)
}

// Close stops accepting appends and writes those already accepted: it
// takes every writer slot for good, so no writer runs or starts again,
// then calls closeWriter, if set, on every writer. It reports false when
// the appender was closed already.
func (a *Appender[W]) Close(closeWriter func(W)) bool {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return false
	}
	a.closed = true
	a.mu.Unlock()
	for range cap(a.slots) {
		a.slots <- struct{}{}
	}
	w := a.takeWriter()
	for batch := a.take(); len(batch) > 0; batch = a.take() {
		a.requeue(a.flush(w, batch))
	}
	a.putWriter(w)
	a.mu.Lock()
	close(a.handoff) // no hand-off comes after closed is set: end the helpers
	a.mu.Unlock()
	if closeWriter != nil {
		a.qmu.Lock()
		defer a.qmu.Unlock()
		for _, w := range a.idle {
			closeWriter(w)
		}
	}
	return true
}

// Stats counts an event store's writes, for tests and benchmarks.
type Stats struct {
	Batches atomic.Int64 // write statements (PostgreSQL) or transactions (SQLite) run
	Streams atomic.Int64 // streams they appended
}

// Live answers the requests of batch whose callers have gone (they are
// never written) and returns the others, in place.
func Live(batch []*AppendRequest) []*AppendRequest {
	live := batch[:0]
	for _, r := range batch {
		if err := r.Ctx.Err(); err != nil {
			r.Done <- AppendResult{Outcome: eventstore.Failed, Err: err}
			continue
		}
		live = append(live, r)
	}
	return live
}

// WriteContext returns the context a batch is written under: cancelled
// only once every caller of batch has gone, so that one caller's
// cancellation cannot fail the others. The caller calls release when the
// batch is written.
func WriteContext(batch []*AppendRequest) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var remaining atomic.Int32
	remaining.Store(int32(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, r := range batch {
		stops[i] = context.AfterFunc(r.Ctx, func() {
			if remaining.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
