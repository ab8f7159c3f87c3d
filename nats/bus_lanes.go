package nats

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/nats-io/nats.go/jetstream"
)

// lane is one lane's queue; mu guards sending on q against its closing, as
// in the in-process dispatcher.
type lane struct {
	mu sync.RWMutex
	q  chan job
	_  [64 - 32]byte
}

// job is one command on its way through a lane: accepted here (msg nil) or
// delivered by a partition's consumer (msg set, acknowledged once
// processed).
type job struct {
	cmd   *factum.Command
	n     int    // partition
	token uint64 // the claim it was admitted under
	msg   jetstream.Msg
	seq   uint64     // the message's stream sequence
	copy  *localCopy // LocalDurable: the stored copy of a command accepted here
	// more are the commands after cmd of a delivered batch message (see
	// HeaderBatch), all of cmd's aggregate: the job is the message.
	more []*factum.Command
}

// local reports whether j's command was accepted here and is stored
// nowhere (LocalFirst): if it does not run here, it is lost unless it is
// handed over to the stream.
func (j *job) local() bool { return j.msg == nil && j.copy == nil }

// leave ends the run of j's command under its claim, noting its aggregate
// for the release, which drops the cached states of the partition.
func (b *Bus) leave(j *job) {
	st := &b.state[j.n]
	st.mu.Lock()
	st.running--
	if b.forgetter != nil {
		if st.touched == nil {
			st.touched = map[factum.AggregateID]struct{}{}
		}
		st.touched[j.cmd.AggregateID] = struct{}{}
	}
	if j.msg != nil {
		delete(st.inflight, j.seq)
		delete(st.handed, j.seq)
	}
	st.mu.Unlock()
}

// laneOf returns the lane of an aggregate.
func (b *Bus) laneOf(id *factum.AggregateID) *lane {
	var h maphash.Hash
	h.SetSeed(b.seed)
	h.WriteString(id.Aggregate)
	h.WriteByte(0)
	h.WriteString(id.ID)
	return &b.lanes[h.Sum64()%uint64(len(b.lanes))]
}

// enqueueLocal queues a command accepted here, as the dispatcher's Send
// does: waiting for room until ctx ends, or refusing at once if so
// configured.
func (b *Bus) enqueueLocal(ctx context.Context, j job) error {
	ln := b.laneOf(&j.cmd.AggregateID)
	ln.mu.RLock()
	defer ln.mu.RUnlock()
	if b.closed.Load() {
		return factum.Errorf(factum.CodeTooManyRequests, "nats: %w: not accepting commands", factum.ErrClosed)
	}
	b.busy.Add(1)
	// Counted before it is queued, so that the lane's count down, when it
	// settled the job, never comes first.
	b.counter(&j).Add(1)
	unqueue := func() {
		b.busy.Add(-1)
		b.settled(&j)
	}
	select {
	case ln.q <- j:
		return nil
	default:
	}
	if b.cfg.RejectWhenFull {
		unqueue()
		return factum.NewError(factum.CodeTooManyRequests, "command lane is full").With(j.cmd.AggregateID, 0, j.cmd.ID, j.cmd.RequestIDOrID())
	}
	select {
	case ln.q <- j:
		return nil
	case <-ctx.Done():
		unqueue()
		return factum.Errorf(factum.CodeTooManyRequests, "command lane stayed full: %w", ctx.Err())
	case <-b.stopping:
		unqueue()
		return factum.Errorf(factum.CodeTooManyRequests, "nats: %w: not accepting commands", factum.ErrClosed)
	}
}

// enqueueDelivered queues a command a consumer delivered, waiting for room
// until ctx (the consumer's) ends. Lanes close only after every consumer
// stopped.
func (b *Bus) enqueueDelivered(ctx context.Context, j job) bool {
	ln := b.laneOf(&j.cmd.AggregateID)
	b.busy.Add(1)
	b.counter(&j).Add(1)
	select {
	case ln.q <- j:
		return true
	case <-ctx.Done():
		b.busy.Add(-1)
		b.settled(&j)
		return false
	}
}

// run is one lane: it processes its jobs in order. A job whose claim no
// longer holds is not processed (see skip); one accepted here and stored
// nowhere is handed over to the stream instead, in the lane's order, and
// so is, with LocalFirst, a delivered one (see handOver), so that the
// commands of an aggregate the lane held keep their order on the stream.
// When the executor takes runs, the jobs of one aggregate queued behind
// one another run together (runJoined), and a delivered batch is a run
// (runBatch).
func (b *Bus) run(q chan job) {
	defer b.lwg.Done()
	var next job // taken from q while a run was gathered, and not of it
	hasNext, closed := false, false
	for {
		var j job
		switch {
		case hasNext:
			j, hasNext = next, false
		case closed:
			return
		default:
			var ok bool
			if j, ok = <-q; !ok {
				return
			}
		}
		switch {
		case b.aborted.Load():
			b.dropped.Add(int64(1 + len(j.more)))
			b.skip(&j, "shut down before the command was processed; it was not appended")
		case !b.enter(&j):
			if (j.local() || b.movesDelivered(&j)) && b.handOver(&j) {
				break
			}
			b.skip(&j, "this instance stopped owning the aggregate's partition before the command was processed, and it could not be handed over to the stream; it was not appended")
		case b.runs != nil && j.copy == nil && b.runJoined(q, &j, &next, &hasNext, &closed):
			continue
		case len(j.more) > 0:
			b.runBatch(&j)
		default:
			sig, held := b.process(&j)
			if !held {
				if j.msg != nil {
					// Read before leave forgets it: a consumer made anew
					// meanwhile redelivered it, and only that delivery's
					// acknowledgement takes it off the stream.
					j.msg = b.latest(&j)
				}
				b.leave(&j)
				// Cut off by the end of its claim: a command accepted
				// here and stored nowhere that did not succeed is handed
				// over too. If it was appended after all, the next
				// owner's run finds its request ID in the event store
				// and signals that outcome; else it runs there.
				if (j.local() || b.movesDelivered(&j)) && !sig.Succeeded() && b.handOver(&j) {
					break
				}
				b.fenced(&j, sig)
				break
			}
			if j.msg != nil {
				// Processed, whatever the outcome: a redelivery would
				// find the same request in the event store. The latest
				// delivery is acknowledged: a consumer made anew meanwhile
				// delivered it again.
				_ = b.latest(&j).Ack()
			}
			b.leave(&j)
			if j.copy != nil {
				b.copyDone(&j)
			}
			b.emit(j.cmd, sig)
		}
		b.done(&j)
	}
}

// movesDelivered reports whether j, a command delivered here that is not
// processed here, is handed over to the stream rather than left on it:
// with LocalFirst, a command accepted here and stored nowhere may precede
// it in the lane, which the hand-over stores on a handed subject, and the
// next owner delivers those first.
func (b *Bus) movesDelivered(j *job) bool {
	return j.msg != nil && b.cfg.Local == LocalFirst && !b.aborted.Load()
}

// skip drops a job that is not processed here. A delivered command, or
// the stored copy of one accepted here (LocalDurable), stays
// unacknowledged on the stream for the partition's next owner, which
// signals its outcome; a command accepted here and stored nowhere (which
// the lane hands over to the stream unless the bus was shut down past its
// deadline, see handOver) gets a failed, retryable PROCESSED signal saying
// why.
func (b *Bus) skip(j *job, why string) {
	switch {
	case j.copy != nil:
		st := &b.state[j.n]
		st.mu.Lock()
		delete(st.copies, j.cmd.ID)
		if j.copy.msg != nil {
			delete(st.inflight, j.copy.seq)
		}
		st.mu.Unlock()
	case j.msg != nil:
		b.forget(j)
	default:
		b.emit(j.cmd, notProcessed(j.cmd, why))
	}
}

// latest returns the latest delivery of j's message.
func (b *Bus) latest(j *job) jetstream.Msg {
	st := &b.state[j.n]
	st.mu.Lock()
	defer st.mu.Unlock()
	if m := st.inflight[j.seq]; m != nil {
		return m
	}
	return j.msg
}

// forget drops a delivered job that is not processed here: it stays
// unacknowledged on the stream.
func (b *Bus) forget(j *job) {
	st := &b.state[j.n]
	st.mu.Lock()
	delete(st.inflight, j.seq)
	delete(st.handed, j.seq)
	st.mu.Unlock()
}

// emit hands a PROCESSED signal to the sink, by the command's origin when
// the sink routes by it.
func (b *Bus) emit(cmd *factum.Command, s factum.Signal) {
	if b.origin != nil {
		if o := cmd.Header[HeaderOrigin]; o != "" {
			b.origin.SignalOrigin(o, s)
			return
		}
	}
	b.sink.Signal(s)
}

func notProcessed(cmd *factum.Command, msg string) factum.Signal {
	return factum.Signal{
		CommandID:   cmd.ID,
		RequestID:   cmd.RequestIDOrID(),
		Stage:       factum.StageProcessed,
		AggregateID: cmd.AggregateID,
		Code:        factum.CodeTooManyRequests,
		Message:     msg,
		SignalTime:  time.Now(),
	}
}
