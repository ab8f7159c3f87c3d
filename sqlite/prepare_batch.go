package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"time"
)

// prepareMaxBatch bounds how many writes share one transaction.
const prepareMaxBatch = 128

// prepareBatchTimeout bounds one batch, waiting for the write connection
// included; a batch that times out is rolled back and reports the error.
const prepareBatchTimeout = 30 * time.Second

// prepareWrite is one write of the prepare backend waiting for a batch.
type prepareWrite struct {
	ctx context.Context
	// apply runs the write inside the batch's transaction and keeps its
	// outcome in the closure. An error it returns fails the whole batch:
	// it is for infrastructure errors only, never for "the key is taken".
	apply func(ctx context.Context, tx *sql.Tx) error
	// purge asks for a lazy purge in the same transaction.
	purge bool

	err  error
	lead bool          // set before wake: this write's goroutine leads next
	wake chan struct{} // closed or sent once the write is done, or must lead
}

// prepareBatcher writes concurrent writes together in one IMMEDIATE
// transaction, so that they share one commit (one fsync under
// synchronous=FULL) instead of paying one each. Each write is still its own
// statement (or savepoint), applied in arrival order, with its own outcome:
// the result is exactly what running them one after another would give,
// committed together.
//
// There is no background goroutine: the first writer to arrive leads,
// writing a batch of what is queued; when it is done it hands the lead to
// the oldest waiting writer, whose goroutine writes the next batch. Nobody
// leads for longer than one batch, so every caller returns once its own
// write is committed.
//
// Cancellation: a write whose context ends while it is queued leaves the
// queue and returns the context's error at once, never written; once its
// batch has started, the caller waits for the outcome (one transaction,
// bounded by prepareBatchTimeout), so the answer is always definite — a
// reservation is never left behind by a call that reported an error.
type prepareBatcher struct {
	db *DB

	mu      sync.Mutex
	queue   []*prepareWrite
	leading bool
	purge   func(ctx context.Context, tx *sql.Tx) error
}

// do writes w and returns its error; w's closure holds the outcome.
func (b *prepareBatcher) do(w *prepareWrite) error {
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
	n := min(len(b.queue), prepareMaxBatch)
	batch := make([]*prepareWrite, n)
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
func (b *prepareBatcher) wait(w *prepareWrite) (done bool) {
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
func (b *prepareBatcher) write(batch []*prepareWrite) {
	live := batch[:0:0]
	purge := false
	for _, w := range batch {
		if err := w.ctx.Err(); err != nil {
			w.err = err
			continue
		}
		live = append(live, w)
		purge = purge || w.purge
	}
	if len(live) == 0 {
		return
	}
	// The batch belongs to all its writers, so no single caller's
	// cancellation may abort it; a timeout of its own bounds it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(live[0].ctx), prepareBatchTimeout)
	defer cancel()
	err := func() error {
		tx, err := b.db.Writer().BeginTx(ctx, nil) // BEGIN IMMEDIATE
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if purge {
			if err := b.purge(ctx, tx); err != nil {
				return fmt.Errorf("purge: %w", err)
			}
		}
		for _, w := range live {
			if err := w.apply(ctx, tx); err != nil {
				return err
			}
		}
		return tx.Commit()
	}()
	if err != nil {
		err = fmt.Errorf("batch of %d writes not committed: %w", len(live), err)
		for _, w := range live {
			w.err = err
		}
	}
}
