package event

import (
	"context"
	"hash/maphash"
	"sync"

	"github.com/factum-go/factum"
)

// laneWork is what one concurrent batch gives each lane, kept by Run from
// batch to batch so that a batch allocates none of it: streams[l] holds
// the indexes of lane l's streams, stop[l] the index of the first stream
// lane l left unhandled (len(batch) for none) and errs[l] why, when it was
// a failure.
type laneWork struct {
	streams [][]int
	stop    []int
	errs    []error
}

// reset makes w ready for a batch on n lanes.
func (w *laneWork) reset(n int) {
	if len(w.streams) != n {
		w.streams, w.stop, w.errs = make([][]int, n), make([]int, n), make([]error, n)
	}
	for l := range n {
		w.streams[l] = w.streams[l][:0]
		w.errs[l] = nil
	}
}

// handleConcurrently handles batch on Concurrency lanes (lanes holds each
// lane's state, w their work), each aggregate's streams on one lane in log
// order. It returns how many streams, from the start of the batch, were
// all handled (the checkpoint may advance past them), and the error of the
// earliest stream whose failure could not be recorded, which is
// batch[done]. A lane stops at such a stream, and every lane stops when
// ctx ends, after the stream in hand.
func (c *Consumer) handleConcurrently(ctx, work context.Context, lanes []attemptDeadlines, w *laneWork, batch []factum.EventStream) (done int, err error) {
	n := c.cfg.Concurrency
	w.reset(n)
	for i := range batch {
		id := &batch[i].AggregateID
		var h maphash.Hash
		h.SetSeed(c.laneSeed)
		h.WriteString(id.Aggregate)
		h.WriteString(id.ID)
		l := h.Sum64() % uint64(n)
		w.streams[l] = append(w.streams[l], i)
	}
	run := func(l int) {
		d := &lanes[l]
		w.stop[l] = len(batch)
		for _, i := range w.streams[l] {
			if ctx.Err() != nil {
				w.stop[l] = i
				return
			}
			if err := c.handle(work, d, &batch[i]); err != nil {
				w.stop[l], w.errs[l] = i, err
				return
			}
		}
	}
	var wg sync.WaitGroup
	for l := 1; l < n; l++ {
		if len(w.streams[l]) == 0 {
			w.stop[l] = len(batch)
			continue
		}
		wg.Go(func() { run(l) })
	}
	run(0)
	wg.Wait()
	done = len(batch)
	for l := range n {
		if w.stop[l] < done {
			done, err = w.stop[l], w.errs[l]
		}
	}
	return done, err
}
