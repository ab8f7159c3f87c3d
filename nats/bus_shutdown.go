package nats

import (
	"context"
	"fmt"
	"time"

	"github.com/factum-go/factum"
	"github.com/nats-io/nats.go/jetstream"
)

// Shutdown stops admission at once (Send fails with TooManyRequests
// wrapping factum.ErrClosed), keeps consuming the partitions this
// instance owns until the lanes are empty and JetStream counts every
// command stored for them before the drain began as acknowledged
// (delivered is not enough: a delivered command may still sit in the
// client's buffer), then stops the consumers and the lanes. If ctx ends
// first, the command in progress on each lane is cancelled, the commands
// accepted here and still queued get a failed PROCESSED signal
// (TooManyRequests: not appended), and the delivered ones stay on the
// stream for the partition's next owner; Shutdown returns an error
// wrapping ctx's. It does not give the partitions up: close the
// Partitions after the engine shut down.
func (b *Bus) Shutdown(ctx context.Context) error {
	if b.closed.Swap(true) {
		return factum.Errorf(factum.CodeIllegalState, "nats: %w: already shut down", factum.ErrClosed)
	}
	close(b.stopping)
	if !b.started.Load() {
		return nil
	}
	// A send that passed admission may still be publishing: what it
	// stores is accepted, so the drain must see it.
	for b.sending.Load() != 0 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	drained := b.drain(ctx)
	b.mu.Lock()
	if b.unsub != nil {
		b.unsub()
	}
	for n, pc := range b.consumers {
		pc.cancel()
		delete(b.consumers, n)
	}
	b.mu.Unlock()
	b.cwg.Wait()
	for i := range b.lanes {
		ln := &b.lanes[i]
		ln.mu.Lock() // waits for senders between their check and their send
		close(ln.q)
		ln.mu.Unlock()
	}
	done := make(chan struct{})
	go func() {
		b.lwg.Wait()
		close(done)
	}()
	select {
	case <-done:
		b.cancel()
		if drained != nil {
			return drained
		}
		return nil
	case <-ctx.Done():
	}
	b.aborted.Store(true)
	b.cancel()
	<-done
	return fmt.Errorf("nats: command bus: shutdown deadline passed, %d queued commands not processed here: %w", b.dropped.Load(), ctx.Err())
}

// drain waits until every partition consumed here has processed the
// commands stored before the drain began, and the lanes are empty, or
// until ctx ends. Commands other instances keep sending meanwhile do not
// hold it: they stay on the stream for the next owner.
func (b *Bus) drain(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	// The stream's last sequence bounds what the drain waits for; without
	// it, commands other instances keep sending could hold it forever, so
	// it is read again until it is known or ctx ends.
	var last uint64
	for {
		ictx, cancel := context.WithTimeout(ctx, b.cfg.PublishTimeout)
		info, err := b.stream.Info(ictx)
		cancel()
		if err == nil {
			last = info.State.LastSeq
			break
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("nats: command bus: the command stream's state could not be read before the shutdown deadline (%v): %w", err, ctx.Err())
		}
	}
	if b.hooks != nil && b.hooks.draining != nil {
		b.hooks.draining()
	}
	for {
		if b.quiet(ctx, last) {
			return nil
		}
		if b.hooks != nil && b.hooks.unquiet != nil {
			b.hooks.unquiet()
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("nats: command bus: commands of owned partitions still pending at the shutdown deadline (they stay on the stream): %w", ctx.Err())
		}
	}
}

// quiet reports whether the lanes are empty and every running consumer
// has processed every command of its partition up to stream sequence last
// (none when last is 0: the stream was empty): none of them is in a lane,
// and the server counts each delivered and acknowledged. A command the
// server delivered may still sit in the client's buffer, in no lane and
// not yet in flight here, so what the server has left to deliver is not
// enough; what it waits to see acknowledged is. Commands stored after
// last, which other instances may keep sending, do not hold it: the
// acknowledgement floor passes last once every command of the partition
// up to last is acknowledged, whatever waits beyond it. The commands this
// instance handed over to the stream (see handOver) do, wherever they
// were stored: a command accepted here before the drain may be handed
// over during it, behind an earlier one of its partition, to be
// processed here; the handed subjects' consumer is waited for up to the
// highest of them.
func (b *Bus) quiet(ctx context.Context, last uint64) bool {
	if b.busy.Load() != 0 {
		return false
	}
	b.mu.Lock()
	pcs := make([]*partConsumer, 0, len(b.consumers))
	for _, pc := range b.consumers {
		pcs = append(pcs, pc)
	}
	b.mu.Unlock()
	for _, pc := range pcs {
		st := &b.state[pc.n]
		st.mu.Lock()
		if st.token != pc.token {
			// The claim ended: the rest is the next owner's. A claim
			// whose renewal is late still holds, and its lanes wait for
			// the renewal (see enter), so the drain waits too.
			st.mu.Unlock()
			continue
		}
		for seq := range st.inflight {
			if seq <= last {
				st.mu.Unlock()
				return false
			}
		}
		// Read after busy: a hand-over raises it before its job leaves
		// the lanes.
		handedUpTo := max(last, st.handedMax)
		st.mu.Unlock()
		conss, ok := pc.drained(b.cfg.Local)
		if !ok {
			return false // not made yet
		}
		pc.mu.Lock()
		handed := pc.handed
		pc.mu.Unlock()
		for _, cons := range conss {
			upTo := last
			if handed != nil && cons == handed {
				upTo = handedUpTo
			}
			if !b.settledUpTo(ctx, cons, upTo) {
				return false
			}
		}
	}
	return b.busy.Load() == 0
}

// settledUpTo reports whether the server counts every message of cons up
// to stream sequence last delivered and acknowledged. Each consumer
// delivers in stream order: it delivered every one up to last once it
// delivered past last or has nothing left; its acknowledgement floor
// passes last once every one up to last is acknowledged.
func (b *Bus) settledUpTo(ctx context.Context, cons jetstream.Consumer, last uint64) bool {
	ictx, cancel := context.WithTimeout(ctx, b.cfg.PublishTimeout)
	info, err := cons.Info(ictx)
	cancel()
	if err != nil {
		return false
	}
	delivered := info.NumPending == 0 || info.Delivered.Stream >= last
	acked := info.NumAckPending == 0 || info.AckFloor.Stream >= last
	return delivered && acked
}
