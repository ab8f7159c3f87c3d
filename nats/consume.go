package nats

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/factum-go/factum"
	"github.com/nats-io/nats.go/jetstream"
)

// partConsumer consumes one partition's commands under one claim.
type partConsumer struct {
	n      int
	token  uint64
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	cons   jetstream.Consumer // the command subjects' consumer once made, for the drain
	handed jetstream.Consumer // LocalFirst: the handed subjects' consumer once made
}

// drained returns the consumers the drain looks at, and whether every one
// the partition's mode makes was made.
func (pc *partConsumer) drained(local LocalMode) ([]jetstream.Consumer, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.cons == nil || local == LocalFirst && pc.handed == nil {
		return nil, false
	}
	if pc.handed == nil {
		return []jetstream.Consumer{pc.cons}, true
	}
	return []jetstream.Consumer{pc.handed, pc.cons}, true
}

// consumerName is the durable consumer of a partition: one per context
// and partition, whoever owns it.
func (b *Bus) consumerName(n int) string {
	return "factum_" + b.parts.cfg.Context + "_" + strconv.Itoa(n)
}

// acquire starts acting on partition n under the claim token: it starts
// the partition's consumer. It runs on the lease goroutine and does not
// block.
func (b *Bus) acquire(n int, token uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() || n >= len(b.state) {
		return
	}
	if cur, ok := b.parts.Owns(n); !ok || cur != token {
		// Start's look at the partitions held raced with their release.
		return
	}
	old := b.consumers[n]
	again := old != nil && old.token == token
	st := &b.state[n]
	st.mu.Lock()
	if st.token != token {
		st.delivered = 0
	}
	st.token = token
	if !again {
		// A new consumer is made: what the stream holds goes first,
		// from the moment the claim admits commands here.
		st.catchingUp, st.fwdSeq = true, 0
	}
	if st.inflight == nil {
		st.inflight = map[uint64]jetstream.Msg{}
	}
	st.mu.Unlock()
	if again {
		return
	}
	if old != nil {
		old.cancel()
	}
	ctx, cancel := context.WithCancel(b.runCtx)
	pc := &partConsumer{n: n, token: token, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	b.consumers[n] = pc
	b.cwg.Add(1)
	go b.consume(pc, old)
}

// release stops acting on partition n: no command of it starts here any
// more, its consumer stops, and release waits (up to a tenth of the lease)
// for the commands already started, so that they end before the lease is
// deleted or can lapse and anyone else takes the partition.
func (b *Bus) release(n int) {
	if n >= len(b.state) {
		return
	}
	st := &b.state[n]
	st.mu.Lock()
	st.token = 0
	st.mu.Unlock()
	b.mu.Lock()
	if pc := b.consumers[n]; pc != nil {
		pc.cancel()
		delete(b.consumers, n)
	}
	b.mu.Unlock()
	deadline := time.Now().Add(b.guard)
	for {
		st.mu.Lock()
		running := st.running
		st.mu.Unlock()
		if running == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	// The states cached here go stale while another instance owns the
	// partition: the next tenure loads them afresh.
	st.mu.Lock()
	touched := st.touched
	st.touched = nil
	st.copies = nil // the next owner processes what was not done here
	st.mu.Unlock()
	for id := range touched {
		b.forgetter.Forget(id)
	}
}

// consume delivers partition pc.n's commands to the lanes in stream order
// until pc's context ends. It first waits for the consumer of an earlier
// claim, then makes the partition's durable consumers anew: a fresh
// consumer delivers every command not yet acknowledged, in order, at once,
// where the old one would hold back the ones an earlier owner had in hand
// until their acknowledgement wait ran out, and deliver later ones first.
// The commands handed over (see HandedSubject) go first: the partition's
// command subjects are delivered once those stored when the claim began
// were delivered; handed ones stored later (an earlier owner's whose lease
// lapsed) are delivered as they come.
func (b *Bus) consume(pc *partConsumer, old *partConsumer) {
	defer b.cwg.Done()
	defer close(pc.done)
	if old != nil {
		<-old.done
	}
	if b.cfg.Local != LocalFirst {
		// Only LocalFirst hands commands over to the handed subjects.
		b.follow(pc, false, nil)
		return
	}
	ready := make(chan struct{})
	var once sync.Once
	var handed sync.WaitGroup
	handed.Add(1)
	go func() {
		defer handed.Done()
		b.follow(pc, true, func() { once.Do(func() { close(ready) }) })
	}()
	defer handed.Wait()
	select {
	case <-ready:
	case <-pc.ctx.Done():
		return
	}
	b.follow(pc, false, nil)
}

// follow delivers the messages of partition pc.n's command subjects, or
// its handed subjects, to the lanes until pc's context ends, making the
// consumer again after a failure. ready, for the handed subjects, is
// called once none stored is left to deliver.
func (b *Bus) follow(pc *partConsumer, handed bool, ready func()) {
	fresh := true
	backoff := b.guard
	failing := false
	for pc.ctx.Err() == nil {
		cons, err := b.consumer(pc, fresh, handed)
		if err == nil {
			if info := cons.CachedInfo(); info != nil && info.NumAckPending == 0 {
				b.advance(pc, ready, info.NumPending)
			}
			pc.mu.Lock()
			if handed {
				pc.handed = cons
			} else {
				pc.cons = cons
			}
			pc.mu.Unlock()
			err = b.pull(pc, cons, ready)
			// Made anew after any failure: the old one may hold commands
			// it delivered into a broken pull, which it would deliver
			// again only after AckWait, behind later ones.
			fresh = err != nil
		}
		if pc.ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && !failing:
			// Once per run of failures: a lost connection fails every
			// attempt until it is back.
			b.cfg.Logger.Warn("nats: command consumer failed; making it again until it works", "context", b.parts.cfg.Context, "partition", pc.n, "err", err)
			failing = true
		case err == nil:
			failing = false
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-pc.ctx.Done():
			t.Stop()
			return
		}
	}
}

// advance notes that partition pc.n's consumer has pending messages left
// to deliver: of its handed subjects when ready is set (none left: they
// were delivered), else of its command subjects (see caughtUp).
func (b *Bus) advance(pc *partConsumer, ready func(), pending uint64) {
	switch {
	case ready == nil:
		b.caughtUp(pc.n, pc.token, pending)
	case pending == 0:
		ready()
	}
}

// consumer returns the partition's durable consumer of its command
// subjects, or of its handed subjects: made anew when fresh (after a
// claim), the existing one otherwise (after an error of the pull, say a
// lost connection).
func (b *Bus) consumer(pc *partConsumer, fresh, handed bool) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(pc.ctx, b.cfg.PublishTimeout)
	defer cancel()
	name := b.consumerName(pc.n)
	filter := b.cfg.SubjectPrefix + "." + b.parts.cfg.Context + ".*." + strconv.Itoa(pc.n)
	what := "factum commands of "
	if handed {
		name += "_" + handedSuffix
		filter = b.handedFilter(pc.n)
		what = "factum commands handed over of "
	}
	if !fresh {
		c, err := b.stream.Consumer(ctx, name)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, err
		}
	}
	if _, ok := b.ownsNow(pc.n); !ok {
		return nil, errors.New("nats: the partition's claim no longer holds")
	}
	if err := b.stream.DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, err
	}
	return b.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       name,
		Description:   what + b.parts.cfg.Context + " partition " + strconv.Itoa(pc.n),
		FilterSubject: filter,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       b.cfg.AckWait,
		MaxAckPending: b.cfg.MaxAckPending,
		MaxDeliver:    -1,
	})
}

// pull delivers the consumer's messages to the lanes until pc's context
// ends (nil) or the pull fails. Each message is handed over only while the
// claim holds; one already in a lane (delivered again) is skipped. ready
// is follow's.
func (b *Bus) pull(pc *partConsumer, cons jetstream.Consumer, ready func()) error {
	it, err := cons.Messages(jetstream.PullMaxMessages(min(b.cfg.MaxAckPending, 256)))
	if err != nil {
		return err
	}
	stop := context.AfterFunc(pc.ctx, it.Stop)
	defer stop()
	defer it.Stop()
	st := &b.state[pc.n]
	for {
		m, err := it.Next()
		if err != nil {
			if pc.ctx.Err() != nil {
				return nil
			}
			return err
		}
		if b.hooks != nil && b.hooks.pulled != nil && !b.hooks.pulled(pc.ctx) {
			return nil
		}
		if !b.awaitClaim(pc.ctx, pc.n, pc.token) {
			return nil // the claim is gone: the rest is the next owner's
		}
		meta, err := m.Metadata()
		if err != nil {
			_ = m.Term()
			continue
		}
		seq := meta.Sequence.Stream
		st.mu.Lock()
		_, dup := st.inflight[seq]
		st.inflight[seq] = m // a delivery again (a consumer made anew) is the one to acknowledge
		if ready == nil {
			// The command subjects' consumer alone moves the mark
			// Shutdown's drain compares with the stream's last
			// sequence: handed messages are stored after command
			// messages not yet delivered, but delivered first.
			st.delivered = max(st.delivered, seq)
		}
		st.mu.Unlock()
		if dup {
			b.advance(pc, ready, meta.NumPending)
			continue
		}
		// A batch (HeaderBatch) is never a local copy: LocalDurable
		// stores those one command per message.
		count := m.Headers().Get(HeaderBatch)
		if count == "" && b.cfg.Local == LocalDurable && b.copyDelivered(pc.n, m.Headers().Get(HeaderCommandID), m, seq) {
			b.advance(pc, ready, meta.NumPending)
			continue
		}
		j, err := b.decodeJob(m.Data(), count)
		if err != nil {
			b.cfg.Logger.Error("nats: dropping a command message that does not decode", "subject", m.Subject(), "seq", seq, "err", err)
			_ = m.Term()
			b.forget(&job{n: pc.n, seq: seq})
			b.advance(pc, ready, meta.NumPending)
			continue
		}
		j.n, j.token, j.msg, j.seq = pc.n, pc.token, m, seq
		if !b.enqueueDelivered(pc.ctx, j) {
			b.forget(&job{n: pc.n, seq: seq})
			return nil
		}
		b.advance(pc, ready, meta.NumPending)
	}
}

// decodeJob decodes a delivered message's body: one command, or the
// commands of a batch when count (its HeaderBatch) is set, as one job.
// The commands' bodies are decoded here too (see Preparer), on the pull
// goroutine, rather than in the lane.
func (b *Bus) decodeJob(data []byte, count string) (job, error) {
	if count == "" {
		cmd, err := decodeCommand(data)
		if err != nil {
			return job{}, err
		}
		b.prepare(cmd)
		return job{cmd: cmd}, nil
	}
	cmds, err := decodeBatch(data, count)
	if err != nil {
		return job{}, err
	}
	b.prepare(cmds...)
	return job{cmd: cmds[0], more: cmds[1:]}, nil
}

// process runs j's command under its claim (Partitions.Begin): with a
// context that ends the moment this instance can no longer be sure of the
// claim, and counted as the claim's work, so that giving the partition up
// waits for it before the lease is deleted. It reports whether the claim
// held throughout; if not, the outcome must not be acknowledged (see
// fenced).
//
// A claim that refuses the command while this instance still acts on it
// is short of time (its renewal is late; the lane's check came before
// its validity ran out): the command waits for the renewal as enter does,
// since the claim may go on as it was, with the same consumer, which would
// deliver a command set aside here again only after AckWait, behind the
// later ones of its aggregate.
func (b *Bus) process(j *job) (factum.Signal, bool) {
	ctx, w, ok := b.begin(j.n, j.token)
	if !ok {
		return notProcessed(j.cmd, "this instance stopped owning the aggregate's partition before the command was processed; it was not appended"), false
	}
	sig := b.proc.Process(ctx, j.cmd)
	// A shutdown cut short cancels the command too (ctx derives from
	// runCtx): cut off as by the end of its claim, it is not acknowledged.
	held := ctx.Err() == nil
	w.End()
	return sig, held
}

// begin starts work under partition n's claim token (Partitions.Begin),
// waiting for a late renewal while the claim is short of time (see
// process); false when the claim is gone.
func (b *Bus) begin(n int, token uint64) (context.Context, Work, bool) {
	ctx, w, ok := b.parts.Begin(b.procCtx, n, token)
	for !ok && b.awaitClaim(b.runCtx, n, token) {
		ctx, w, ok = b.parts.Begin(b.procCtx, n, token)
	}
	return ctx, w, ok
}

// fenced settles a job whose claim ended before or while it ran: its
// outcome is not acknowledged. A delivered command, or the stored copy of
// one accepted here, stays on the stream for the partition's next owner,
// which finds it appended (by its request ID) or processes it, and
// signals; a command accepted here and stored nowhere is signalled as it
// ended, a failure as retryable, since it may or may not have been
// appended: a retry under the same request ID settles it.
func (b *Bus) fenced(j *job, sig factum.Signal) {
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
	case !sig.Succeeded() && sig.Code != factum.CodeTooManyRequests:
		b.emit(j.cmd, notProcessed(j.cmd, "this instance stopped owning the aggregate's partition while the command was processed ("+sig.Message+"); it may or may not have been appended: retry with the same request ID"))
	default:
		b.emit(j.cmd, sig)
	}
}
