package nats

import (
	"context"
	"hash/fnv"
	"strconv"
	"sync"

	"github.com/factum-go/factum"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// HeaderBatch marks a message that holds several commands of one
// aggregate (a batch): its value is their count, its body the commands'
// binary encoding (see WireVersion), in the order they were sent, each
// command's body in it the JSON a message of the command alone carries.
// Its other headers are the aggregate's identity (HeaderTenant,
// HeaderAggregateID), the origin and the trace headers of its first
// command; its Nats-Msg-Id is derived from its commands' IDs, so
// JetStream's de-duplication covers the same batch stored again, not a
// command of it sent again alone: that is stored again, and the owner
// finds it appended by its request ID in the event store, as it does a
// command delivered again. A message without it holds one command.
const HeaderBatch = "Factum-Batch"

// DefaultMaxBatch bounds the commands of one batch message (see
// BusConfig.MaxBatch).
const DefaultMaxBatch = 64

// maxBatchBytes bounds the body of a batch message, well under the
// server's default maximum payload (1 MiB).
const maxBatchBytes = 256 << 10

// outKey is an aggregate as the sender side groups its commands: by type,
// ID and effective tenant.
type outKey struct {
	named      factum.NamedAggregate
	id, tenant string
}

func outKeyOf(cmd *factum.Command) outKey {
	return outKey{named: cmd.AggregateID.NamedAggregate, id: cmd.AggregateID.ID, tenant: cmd.AggregateID.TenantOrDefault()}
}

// outbox is one aggregate's sends while a publish of its commands is in
// flight (it exists only then): the sends that arrived meanwhile wait in
// it, in their order, for the next publish, which takes them together.
type outbox struct {
	waiting []*outSend
}

// outboxes are a bus's outboxes by aggregate.
type outboxes struct {
	mu sync.Mutex
	m  map[outKey]*outbox
}

// The states of an outSend, written under outboxes.mu.
const (
	outQueued  = iota // waiting in its outbox
	outLeading        // told to publish the next batch (first in its outbox)
	outTaken          // in a batch on its way: its answer comes on ch
)

// outSend is one send waiting in an outbox. It holds the JSON of its
// command's body, which is all a batch message carries of it as JSON, or
// of the whole command (see commandBody).
type outSend struct {
	ctx   context.Context
	cmd   *factum.Command
	body  []byte // the JSON of the command's body (marshalBody's)
	state int
	ch    chan outAnswer // 1: the lead, or the answer
}

// outAnswer is what an outSend is told: to lead the next publish, or its
// command's outcome.
type outAnswer struct {
	lead bool
	seq  uint64 // the stream sequence the command's message was stored at
	err  error
}

// sendCoalesced publishes cmd, a command of partition n that JetStream
// stores for its owner (see sendStored), as a group commit per aggregate:
// at most one publish of the aggregate's commands is in flight from this
// instance; a send that finds none publishes cmd alone, as a message of
// one command; the sends arriving while one is in flight wait, and the
// first of them publishes, once it ended, every one waiting (up to
// MaxBatch and maxBatchBytes) as one batch message (HeaderBatch). Each
// send returns its command's outcome: the batch's, with its own
// identities. A send whose ctx ends while it waits is taken out and not
// sent; once its batch is on its way it waits for JetStream's answer, up
// to PublishTimeout, as a send of one command does. It returns the stream
// sequence cmd's message was stored at (0 when it was not).
func (b *Bus) sendCoalesced(ctx context.Context, cmd *factum.Command, n int) (uint64, error) {
	if b.cfg.MaxBatch == 1 {
		return b.publishSeq(ctx, cmd, n, false)
	}
	key := outKeyOf(cmd)
	o := &b.out
	var body []byte // the body's JSON, once the send found an outbox
	o.mu.Lock()
	box := o.m[key]
	for box != nil && body == nil {
		// It joins a batch, which carries no more of its command as
		// JSON than its body's, marshalled outside the lock: the outbox
		// may be gone when the lock is taken again.
		o.mu.Unlock()
		var err error
		if body, err = marshalBody(cmd); err != nil {
			return 0, err
		}
		o.mu.Lock()
		box = o.m[key]
	}
	if box == nil {
		if o.m == nil {
			o.m = map[outKey]*outbox{}
		}
		box = &outbox{}
		o.m[key] = box
		o.mu.Unlock()
		b.coalescing(1)
		// Alone: its command's JSON, marshalled once (around its body's
		// when it has it).
		seq, err := b.publishBody(ctx, cmd, body, n)
		o.mu.Lock()
		b.handOn(key, box)
		o.mu.Unlock()
		return seq, err
	}
	me := &outSend{ctx: ctx, cmd: cmd, body: body, ch: make(chan outAnswer, 1)}
	box.waiting = append(box.waiting, me)
	o.mu.Unlock()
	select {
	case a := <-me.ch:
		if a.lead {
			return b.lead(key, box, me, n)
		}
		return a.seq, a.err
	case <-ctx.Done():
	}
	o.mu.Lock()
	switch me.state {
	case outQueued:
		box.remove(me)
		o.mu.Unlock()
		return 0, gaveUp(cmd, ctx.Err())
	case outLeading:
		// Told to lead as its ctx ended: the next one leads instead.
		box.remove(me)
		b.handOn(key, box)
		o.mu.Unlock()
		return 0, gaveUp(cmd, ctx.Err())
	}
	o.mu.Unlock()
	a := <-me.ch // on its way: the answer comes
	return a.seq, a.err
}

// coalescing calls the test seam of the same name.
func (b *Bus) coalescing(commands int) {
	if b.hooks != nil && b.hooks.coalescing != nil {
		b.hooks.coalescing(commands)
	}
}

// remove takes s out of the box's waiting sends.
func (box *outbox) remove(s *outSend) {
	for i, w := range box.waiting {
		if w == s {
			box.waiting = append(box.waiting[:i], box.waiting[i+1:]...)
			return
		}
	}
}

// handOn ends a publish of key's commands: the first send waiting leads
// the next one, or, none waiting, the outbox goes. b.out.mu is held.
func (b *Bus) handOn(key outKey, box *outbox) {
	if len(box.waiting) == 0 {
		delete(b.out.m, key)
		return
	}
	next := box.waiting[0]
	next.state = outLeading
	next.ch <- outAnswer{lead: true}
}

// lead publishes the sends waiting in key's outbox, me (the first) and
// those behind it, up to MaxBatch and maxBatchBytes, as one message, tells
// each its outcome and hands the outbox on. A waiting send whose ctx
// ended is taken out and told it gave up. It returns the stream sequence
// the message was stored at (0 when it was not) and me's outcome.
func (b *Bus) lead(key outKey, box *outbox, me *outSend, n int) (uint64, error) {
	limit := min(maxBatchBytes, b.nc.MaxPayload()-4096)
	o := &b.out
	o.mu.Lock()
	if err := me.ctx.Err(); err != nil {
		// Its ctx ended as it was told to lead: not sent, the next one
		// leads instead.
		box.remove(me)
		b.handOn(key, box)
		o.mu.Unlock()
		return 0, gaveUp(me.cmd, err)
	}
	var batch []*outSend
	size := 2
	i := 0
	for ; i < len(box.waiting) && len(batch) < b.cfg.MaxBatch; i++ {
		s := box.waiting[i]
		if s != me && s.ctx.Err() != nil {
			s.state = outTaken
			s.ch <- outAnswer{err: gaveUp(s.cmd, s.ctx.Err())}
			continue
		}
		est := s.size()
		if len(batch) > 0 && int64(size+est) > limit {
			break
		}
		size += est
		s.state = outTaken
		batch = append(batch, s)
	}
	box.waiting = append(box.waiting[:0], box.waiting[i:]...)
	o.mu.Unlock()
	b.coalescing(len(batch))
	var errs []error
	var seq uint64
	if len(batch) == 1 {
		var err error
		seq, err = b.publishBody(me.ctx, me.cmd, me.body, n)
		errs = []error{err}
	} else {
		seq, errs = b.publishBatch(me.ctx, batch, n)
	}
	o.mu.Lock()
	b.handOn(key, box)
	o.mu.Unlock()
	for j, s := range batch[1:] {
		s.ch <- outAnswer{seq: seq, err: errs[j+1]}
	}
	return seq, errs[0]
}

// publishBody is publishSeq for a command whose body's JSON is body (nil:
// not marshalled yet): the message of one command, whose JSON it builds
// around body, or marshals whole without it.
func (b *Bus) publishBody(ctx context.Context, cmd *factum.Command, body []byte, n int) (uint64, error) {
	var data []byte
	var err error
	if body == nil {
		data, err = marshalCommand(cmd)
	} else {
		data, err = marshalCommandBody(cmd, body)
	}
	if err != nil {
		return 0, err
	}
	owner, err := b.reachable(cmd, n, false)
	if err != nil {
		return 0, err
	}
	return b.store(ctx, cmd, n, owner, commandMsg(b.cfg.SubjectPrefix, cmd, data, n))
}

// size returns a bound of the bytes the send's command takes in a batch
// message's body (see appendCommand): its body's JSON, its strings, each
// with room for its field's tag and length, and the room of its other
// fields.
func (s *outSend) size() int {
	c := s.cmd
	const perString = 12 // a field's tag and length, and a message's
	n := 96 + len(s.body) + 6*perString
	n += len(c.ID) + len(c.RequestID) + len(c.Name) + len(c.OwnerID)
	n += len(c.AggregateID.Context) + len(c.AggregateID.Aggregate) + len(c.AggregateID.ID) + len(c.AggregateID.Tenant)
	for k, v := range c.Header {
		n += len(k) + len(v) + 2*perString
	}
	return n
}

// reachable returns the owner of partition n, or the UnavailableError of
// cmd when NATS or the owner is unreachable; owned skips the look at the
// owner (this instance, whose claim the watched view may not show yet).
func (b *Bus) reachable(cmd *factum.Command, n int, owned bool) (string, error) {
	if st := b.nc.Status(); st != natsgo.CONNECTED {
		return "", b.unavailable(cmd, n, "", "NATS is unreachable (connection "+st.String()+")", nil)
	}
	if owned {
		return b.parts.Instance(), nil
	}
	owner, alive := b.parts.Owner(n)
	if owner != "" && !alive {
		return owner, b.unavailable(cmd, n, owner, "the partition's owner "+owner+" is unreachable (no announcement within a lease); another instance takes the partition over within a lease", nil)
	}
	return owner, nil
}

// publishBatch publishes the commands of batch, two or more of one
// aggregate, as one batch message, and returns the stream sequence it was
// stored at (0 when it was not) and each command's outcome, in batch's
// order: all stored, or the same failure, each with its command's
// identities.
func (b *Bus) publishBatch(ctx context.Context, batch []*outSend, n int) (uint64, []error) {
	errs := make([]error, len(batch))
	first := batch[0].cmd
	fail := func(err *factum.Error) (uint64, []error) {
		for i, s := range batch {
			errs[i] = err.With(s.cmd.AggregateID, 0, s.cmd.ID, s.cmd.RequestIDOrID())
		}
		return 0, errs
	}
	owner, err := b.reachable(first, n, false)
	if err != nil {
		return fail(err.(*factum.Error))
	}
	seq, err := b.put(ctx, b.batchMsg(batch, n))
	if err != nil {
		return fail(b.refused(first, n, owner, err, true))
	}
	return seq, errs
}

// batchMsg makes the message of batch (see HeaderBatch).
func (b *Bus) batchMsg(batch []*outSend, n int) *natsgo.Msg {
	first := batch[0].cmd
	body := encodeCommands(batch)
	id := fnv.New64a()
	for _, s := range batch {
		id.Write([]byte(s.cmd.ID))
		id.Write([]byte{0})
	}
	count := strconv.Itoa(len(batch))
	h := natsgo.Header{
		// Derived from every command's ID: a message stored again with
		// the same commands is stored once, one with other commands is
		// never mistaken for it, and, IDs never holding '/', neither is
		// a command stored alone (see handedID for the others).
		jetstream.MsgIDHeader: {first.ID + "/" + count + "/" + strconv.FormatUint(id.Sum64(), 16)},
		HeaderBatch:           {count},
		HeaderTenant:          {first.AggregateID.TenantOrDefault()},
		HeaderAggregateID:     {first.AggregateID.ID},
		HeaderOrigin:          {first.Header[HeaderOrigin]},
	}
	for _, t := range traceHeaders {
		if v := first.Header[t.key]; v != "" {
			h[t.header] = []string{v}
		}
	}
	return &natsgo.Msg{Subject: CommandSubject(b.cfg.SubjectPrefix, first.AggregateID.NamedAggregate, n), Header: h, Data: body}
}
