package postgres

import (
	"context"
	"slices"
)

// Appends are coalesced by group commit without a writer goroutine: an
// Append queues its request, then tries to take one of Writers slots. With
// a slot it writes everything queued (its own request among it, unless
// another writer took it first) in one statement; without one it waits,
// as a writer busy now takes the queue when it finishes. An uncontended
// append thus runs on its caller's goroutine, with no hand-off, and under
// load appends queue up while statements are in flight and are written
// together by the next.

// lead writes batches while it holds a writer slot. After a batch, if more
// is queued, it hands the work to a new goroutine and returns, so that a
// caller whose own request is done does not wait for other callers'.
func (s *EventStore) lead() {
	for {
		select {
		case s.slots <- struct{}{}:
		default:
			return // every writer is busy: the next to finish takes the queue
		}
		w := s.takeWriter()
		batch := s.take()
		if len(batch) > 0 {
			s.requeue(s.flush(w, batch))
		}
		s.putWriter(w)
		<-s.slots
		// A request queued while the slot was held found no slot: look
		// again now that it is free.
		if !s.pending() {
			return
		}
		if len(batch) > 0 {
			go s.lead()
			return
		}
	}
}

// take removes and returns up to MaxBatch queued requests of distinct
// aggregates, oldest first. A second request for an aggregate stays queued
// for a later statement: the statement's predecessor check cannot see rows
// the same statement inserts.
func (s *EventStore) take() []*esRequest {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if len(s.queue) == 0 {
		return nil
	}
	batch := make([]*esRequest, 0, min(len(s.queue), s.opts.MaxBatch))
	var keys map[esAggregateKey]struct{}
	if len(s.queue) > 1 {
		keys = make(map[esAggregateKey]struct{}, cap(batch))
	}
	rest := s.queue[:0]
	for i, r := range s.queue {
		if len(batch) == s.opts.MaxBatch {
			rest = append(rest, s.queue[i:]...)
			break
		}
		if keys != nil {
			k := r.row.Key()
			if _, dup := keys[k]; dup {
				rest = append(rest, r)
				continue
			}
			keys[k] = struct{}{}
		}
		batch = append(batch, r)
	}
	clear(s.queue[len(rest):])
	s.queue = rest
	return batch
}

// takeWriter returns the idle writer used last, whose connection is the
// likeliest to be warm; the caller holds a slot, so there is one.
func (s *EventStore) takeWriter() *esWriter {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	w := s.idle[len(s.idle)-1]
	s.idle = s.idle[:len(s.idle)-1]
	return w
}

// putWriter returns a writer to the idle ones.
func (s *EventStore) putWriter(w *esWriter) {
	s.qmu.Lock()
	s.idle = append(s.idle, w)
	s.qmu.Unlock()
}

// batchSize returns the largest batch size with a statement up to n.
func (s *EventStore) batchSize(n int) int {
	sizes := s.q.sizes
	i, found := slices.BinarySearch(sizes, n)
	if found {
		return n
	}
	return sizes[i-1]
}

// requeue puts requests to write again at the head of the queue.
func (s *EventStore) requeue(rs []*esRequest) {
	if len(rs) == 0 {
		return
	}
	s.qmu.Lock()
	s.queue = append(rs, s.queue...)
	s.qmu.Unlock()
}

func (s *EventStore) pending() bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.queue) > 0
}

// drain is Close's part: it takes every writer slot, so no writer runs or
// starts again, and writes what is still queued.
func (s *EventStore) drain() {
	for range cap(s.slots) {
		s.slots <- struct{}{}
	}
	w := s.takeWriter()
	defer func() {
		s.putWriter(w)
		s.qmu.Lock()
		defer s.qmu.Unlock()
		for _, w := range s.idle {
			w.close(context.Background())
		}
	}()
	for {
		batch := s.take()
		if len(batch) == 0 {
			return
		}
		s.requeue(s.flush(w, batch))
	}
}
