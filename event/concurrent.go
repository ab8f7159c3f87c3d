package event

import (
	"context"
	"hash/maphash"
	"sync"

	"github.com/factum-go/factum"
)

// handleConcurrently handles batch on Concurrency lanes (lanes holds each
// lane's state), each aggregate's streams on one lane in log order. It
// returns how many streams, from the start of the batch, were all handled
// (the checkpoint may advance past them), and the error of the earliest
// stream whose failure could not be recorded, which is batch[done]. A lane stops at such a stream, and every
// lane stops when ctx ends, after the stream in hand.
func (c *Consumer) handleConcurrently(ctx, work context.Context, lanes []attemptDeadlines, batch []factum.EventStream) (done int, err error) {
	n := c.cfg.Concurrency
	streams := make([][]int, n)
	for i := range batch {
		id := &batch[i].AggregateID
		var h maphash.Hash
		h.SetSeed(c.laneSeed)
		h.WriteString(id.Aggregate)
		h.WriteString(id.ID)
		l := h.Sum64() % uint64(n)
		streams[l] = append(streams[l], i)
	}
	// stop[l] is the index of the first stream lane l left unhandled
	// (len(batch) for none); errs[l] says why, when it was a failure.
	stop := make([]int, n)
	errs := make([]error, n)
	run := func(l int, d *attemptDeadlines) {
		stop[l] = len(batch)
		for _, i := range streams[l] {
			if ctx.Err() != nil {
				stop[l] = i
				return
			}
			if err := c.handle(work, d, &batch[i]); err != nil {
				stop[l], errs[l] = i, err
				return
			}
		}
	}
	var wg sync.WaitGroup
	for l := 1; l < n; l++ {
		wg.Go(func() { run(l, &lanes[l]) })
	}
	run(0, &lanes[0])
	wg.Wait()
	done = len(batch)
	for l := range n {
		if stop[l] < done {
			done, err = stop[l], errs[l]
		}
	}
	return done, err
}
