package nats

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// localCopy is the stored copy of a command that LocalDurable processes
// here: the partition's consumer meets it too, and must only acknowledge
// it once the local processing is done.
type localCopy struct {
	done bool          // the local processing ended (processed or refused)
	msg  jetstream.Msg // the delivered copy, once the consumer met it
	seq  uint64
}

// sendDurable publishes j's command and, once JetStream stored it, queues
// it here. A command that cannot be queued here stays stored, for the
// consumer.
func (b *Bus) sendDurable(ctx context.Context, j job) error {
	st := &b.state[j.n]
	c := &localCopy{}
	st.mu.Lock()
	if st.copies == nil {
		st.copies = map[string]*localCopy{}
	}
	if _, resent := st.copies[j.cmd.ID]; resent {
		st.mu.Unlock()
		return b.publish(ctx, j.cmd, j.n) // JetStream de-duplicates it; one local run is enough
	}
	st.copies[j.cmd.ID] = c
	st.mu.Unlock()
	if err := b.publish(ctx, j.cmd, j.n); err != nil {
		st.mu.Lock()
		delete(st.copies, j.cmd.ID)
		st.mu.Unlock()
		return err
	}
	j.copy = c
	if err := b.enqueueLocal(context.WithoutCancel(ctx), j); err != nil {
		// Stored but not queued here: the consumer processes it.
		b.handBack(&j)
	}
	return nil
}

// copyDelivered is the consumer meeting the delivered copy of a command:
// it reports whether the copy belongs to a local processing (then it is
// acknowledged now or when that ends, and not delivered to a lane).
func (b *Bus) copyDelivered(n int, commandID string, m jetstream.Msg, seq uint64) bool {
	st := &b.state[n]
	st.mu.Lock()
	c := st.copies[commandID]
	if c == nil {
		st.mu.Unlock()
		return false
	}
	if !c.done {
		c.msg, c.seq = m, seq
		st.mu.Unlock()
		return true
	}
	delete(st.copies, commandID)
	delete(st.inflight, seq)
	st.mu.Unlock()
	_ = m.Ack()
	return true
}

// copyDone ends the local processing of j's command: its delivered copy,
// met already or later, is acknowledged.
func (b *Bus) copyDone(j *job) {
	st := &b.state[j.n]
	st.mu.Lock()
	c := j.copy
	c.done = true
	m := c.msg
	if m != nil {
		delete(st.copies, j.cmd.ID)
		delete(st.inflight, c.seq)
	}
	st.mu.Unlock()
	if m != nil {
		_ = m.Ack()
	}
}

// handBack gives j's command, not processed here, to the consumer: the
// copy it met already goes to a lane as any delivered command, one it
// meets later is delivered as usual.
func (b *Bus) handBack(j *job) {
	st := &b.state[j.n]
	st.mu.Lock()
	c := j.copy
	delete(st.copies, j.cmd.ID)
	m, seq := c.msg, c.seq
	st.mu.Unlock()
	if m == nil {
		return
	}
	if !b.enqueueDelivered(b.runCtx, job{cmd: j.cmd, n: j.n, token: j.token, msg: m, seq: seq}) {
		b.forget(&job{n: j.n, seq: seq})
	}
}
