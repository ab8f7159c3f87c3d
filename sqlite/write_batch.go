package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"time"
)

// writeMaxBatch bounds how many writes share one transaction.
const writeMaxBatch = 128

// writeBatchTimeout bounds one batch, waiting for the write connection
// included; a batch that times out is rolled back and reports the error.
const writeBatchTimeout = 30 * time.Second

// batchWrite is one write waiting for a batch of the DB's writeBatcher.
type batchWrite struct {
	ctx context.Context
	// apply runs the write inside the batch's transaction and keeps its
	// outcome in the closure, set afresh on every run: a write is run
	// again, alone, when another write of its batch fails. An error it
	// returns is the write's own; it rolls back the batch, whose writes
	// are then written one transaction each.
	apply func(ctx context.Context, tx *sql.Tx) error

	err  error
	lead bool          // set before wake: this write's goroutine leads next
	wake chan struct{} // closed or sent once the write is done, or must lead
}

// writeBatcher writes concurrent writes together in one IMMEDIATE
// transaction, so that they share one commit (one fsync under
// synchronous=FULL) instead of paying one each. There is one per DB,
// shared by every store of the database that writes through it (event
// appends, snapshot saves, checkpoints, prepare keys), so that an append
// batch and the consumers' writes queued beside it commit together. Each
// write is still its own statements, applied in arrival order, with its
// own outcome: the result is exactly what running them one after another
// would give, committed together.
//
// A write whose apply fails rolls the transaction back; the batch is then
// written again one write per transaction, in the same order, so that one
// write the database refuses cannot fail the others, and each write stays
// atomic. A failed commit fails every write of the batch (none of them is
// written).
//
// There is no background goroutine: the first writer to arrive leads,
// writing a batch of what is queued; when it is done it hands the lead to
// the oldest waiting writer, whose goroutine writes the next batch. Nobody
// leads for longer than one batch (with its one-write re-runs after a
// failed write). A batch runs with the values of its first write's
// context (a trace span, say), never with its cancellation: its statements
// belong to every write in it.
//
// Cancellation: a write whose context ends while it is queued leaves the
// queue and returns the context's error at once, never written; once its
// batch has started, the caller waits for the outcome (bounded by
// writeBatchTimeout), so the answer is always definite — a reservation is
// never left behind by a call that reported an error.
type writeBatcher struct {
	db *DB

	mu      sync.Mutex
	queue   []*batchWrite
	leading bool
	// batches counts the transactions begun (tests read it).
	batches uint64
}

// idle reports whether no batch is being written or queued: a caller may
// then write on the connection directly with no batch to join. It is a
// hint, read without holding anything afterwards.
func (b *writeBatcher) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.leading
}

// do writes w and returns its error; w's closure holds the outcome.
func (b *writeBatcher) do(w *batchWrite) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	w.wake = make(chan struct{}, 1)
	b.mu.Lock()
	b.queue = append(b.queue, w)
	lead := !b.leading
	b.leading = true
	b.mu.Unlock()
	if !lead {
		if b.wait(w) {
			return w.err
		}
	}
	// Leading: w is the oldest queued write, so it is in this batch.
	b.mu.Lock()
	n := min(len(b.queue), writeMaxBatch)
	batch := make([]*batchWrite, n)
	copy(batch, b.queue)
	b.queue = append(b.queue[:0:0], b.queue[n:]...)
	b.mu.Unlock()

	b.write(batch)

	b.mu.Lock()
	if len(b.queue) > 0 {
		next := b.queue[0]
		next.lead = true
		next.wake <- struct{}{}
	} else {
		b.leading = false
	}
	b.mu.Unlock()
	for _, o := range batch {
		if o != w {
			o.wake <- struct{}{}
		}
	}
	return w.err
}

// wait waits for w to be written, or to be told to lead (false). A caller
// whose context ends while w is still queued leaves the queue and returns
// at once; once w is in a batch, or must lead, it waits for the outcome.
func (b *writeBatcher) wait(w *batchWrite) (done bool) {
	select {
	case <-w.wake:
		return !w.lead
	case <-w.ctx.Done():
	}
	b.mu.Lock()
	if !w.lead {
		if i := slices.Index(b.queue, w); i >= 0 {
			b.queue = slices.Delete(b.queue, i, i+1)
			b.mu.Unlock()
			w.err = w.ctx.Err()
			return true
		}
	}
	b.mu.Unlock()
	<-w.wake
	return !w.lead
}

// write runs batch in one transaction and records each write's error.
func (b *writeBatcher) write(batch []*batchWrite) {
	live := batch[:0:0]
	for _, w := range batch {
		if err := w.ctx.Err(); err != nil {
			w.err = err
			continue
		}
		live = append(live, w)
	}
	if len(live) == 0 {
		return
	}
	// The batch belongs to all its writers, so no single caller's
	// cancellation may abort it; a timeout of its own bounds it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(live[0].ctx), writeBatchTimeout)
	defer cancel()
	failed, err := b.commit(ctx, live)
	if err != nil && failed >= 0 && len(live) > 1 && ctx.Err() == nil {
		// One write failed and rolled the others back with it: write each
		// alone, in order, so that only the failing one reports an error.
		for _, w := range live {
			if _, err := b.commit(ctx, []*batchWrite{w}); err != nil {
				w.err = fmt.Errorf("write not committed: %w", err)
			}
		}
		return
	}
	if err != nil {
		err = fmt.Errorf("batch of %d writes not committed: %w", len(live), err)
		for _, w := range live {
			w.err = err
		}
	}
}

// commit runs ws in one transaction. On an error, failed is the index of
// the write whose apply failed, or -1 when the transaction itself failed.
func (b *writeBatcher) commit(ctx context.Context, ws []*batchWrite) (failed int, err error) {
	b.mu.Lock()
	b.batches++
	b.mu.Unlock()
	tx, err := b.db.Writer().BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return -1, err
	}
	defer tx.Rollback()
	// The writes' statements run under the write lock the transaction
	// holds, so none of them waits for a lock; the batch's timeout bounds
	// the waits, for the connection and the lock (BEGIN) and for the
	// commit, which keep ctx. A statement given a context that can end
	// costs the driver a goroutine watching it and a progress handler, as
	// much again as a point write.
	stmtCtx := context.WithoutCancel(ctx)
	for i, w := range ws {
		if err := w.apply(stmtCtx, tx); err != nil {
			return i, err
		}
	}
	if err := tx.Commit(); err != nil {
		return -1, err
	}
	return 0, nil
}
