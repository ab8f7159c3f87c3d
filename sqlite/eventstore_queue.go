package sqlite

// Appends are coalesced by group commit without a writer goroutine: an
// Append queues its request, then tries to take the one writer slot (the
// database has one write connection). With it, it writes everything queued
// in one transaction, its own request among it unless the previous writer
// took it; without it, it waits, as the writer busy now takes the queue
// when it finishes. An uncontended append thus runs on its caller's
// goroutine, and under load appends queue up during one commit and share
// the next.

// lead writes batches while it holds the writer slot. After a batch, if
// more is queued, it hands the work to a new goroutine and returns, so
// that a caller whose own request is done does not wait for others'.
func (s *EventStore) lead() {
	for {
		select {
		case s.slot <- struct{}{}:
		default:
			return // the writer is busy: it takes the queue when it finishes
		}
		batch := s.take()
		if len(batch) > 0 {
			s.flush(batch)
		}
		<-s.slot
		// A request queued while the slot was held found it taken: look
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

// take removes and returns up to MaxBatch queued requests, oldest first.
func (s *EventStore) take() []*esRequest {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	n := min(len(s.queue), s.maxBatch)
	if n == 0 {
		return nil
	}
	batch := make([]*esRequest, n)
	copy(batch, s.queue)
	rest := copy(s.queue, s.queue[n:])
	clear(s.queue[rest:])
	s.queue = s.queue[:rest]
	return batch
}

func (s *EventStore) pending() bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.queue) > 0
}

// drain is Close's part: it takes the writer slot for good, so no writer
// runs or starts again, and writes what is still queued.
func (s *EventStore) drain() {
	s.slot <- struct{}{}
	for batch := s.take(); len(batch) > 0; batch = s.take() {
		s.flush(batch)
	}
}
