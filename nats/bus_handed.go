package nats

import (
	"context"
	"fmt"
	"strconv"

	"github.com/factum-go/factum"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// handedSuffix ends the subject of a command handed over to the stream by
// an owner whose claim ended (see HandedSubject).
const handedSuffix = "handed"

// HandedSubject returns the subject a command of the aggregate type for the
// partition travels on when its owner hands it over to the partition's next
// owner: CommandSubject followed by ".handed". A new owner delivers every
// command stored on the partition's handed subjects before any stored on
// its command subjects: a hand-over puts, in the order its lanes held
// them, the commands an owner admitted and did not process ahead of the
// commands stored later.
func HandedSubject(prefix string, named factum.NamedAggregate, partition int) string {
	return CommandSubject(prefix, named, partition) + "." + handedSuffix
}

// handedFilter is the filter of partition n's handed subjects.
func (b *Bus) handedFilter(n int) string {
	return b.cfg.SubjectPrefix + "." + b.parts.cfg.Context + ".*." + strconv.Itoa(n) + "." + handedSuffix
}

// publishHanded stores j's commands from the k-th on (see
// job.commands) on their handed subject under the message ID id and
// returns its stream sequence. The partition's owner is not looked at:
// the stream keeps the commands for whoever owns the partition next.
//
// A delivered command is stored with the bytes it was delivered with,
// not re-encoded from j's commands, whose bodies the executor may have
// decoded into its command types (see Preparer): a body's fields that
// this instance's types lack reach the next owner, which may know them (a
// newer version, during a rolling upgrade). A whole delivered message (k
// 0) is stored with its body and headers, under its new ID; the rest of
// a delivered batch, decoded again from the message, as a batch message
// of its own, or of one command when one is left. A command accepted here
// is stored as it is sent.
func (b *Bus) publishHanded(ctx context.Context, j *job, k int, id string) (uint64, error) {
	cmds := j.commands()[k:]
	cmd, n := cmds[0], j.n
	owner, err := b.reachable(cmd, n, true)
	if err != nil {
		return 0, err
	}
	var msg *natsgo.Msg
	switch {
	case j.msg != nil && k == 0:
		h := natsgo.Header{}
		for key, v := range j.msg.Headers() {
			h[key] = v
		}
		msg = &natsgo.Msg{Header: h, Data: j.msg.Data()}
	case j.msg != nil:
		if cmds, err = deliveredCommands(j); err != nil {
			return 0, err
		}
		cmds = cmds[k:]
		fallthrough
	default:
		if msg, err = b.handedMsg(cmds, n); err != nil {
			return 0, err
		}
	}
	msg.Subject = HandedSubject(b.cfg.SubjectPrefix, cmd.AggregateID.NamedAggregate, n)
	msg.Header[jetstream.MsgIDHeader] = []string{id}
	return b.store(ctx, cmd, n, owner, msg)
}

// deliveredCommands decodes the message j was delivered as again, its
// commands' bodies as their JSON: j's commands as they were delivered.
func deliveredCommands(j *job) ([]*factum.Command, error) {
	var cmds []*factum.Command
	if count := j.msg.Headers().Get(HeaderBatch); count != "" {
		var err error
		if cmds, err = decodeBatch(j.msg.Data(), count); err != nil {
			return nil, err
		}
	} else {
		cmd, err := decodeCommand(j.msg.Data())
		if err != nil {
			return nil, err
		}
		cmds = []*factum.Command{cmd}
	}
	if len(cmds) != 1+len(j.more) {
		return nil, fmt.Errorf("nats: the message of command %s holds %d commands, its job %d", j.cmd.ID, len(cmds), 1+len(j.more))
	}
	return cmds, nil
}

// handedMsg makes the message of cmds, one aggregate's, handed over to
// partition n: a batch message of two or more, a command's of one.
func (b *Bus) handedMsg(cmds []*factum.Command, n int) (*natsgo.Msg, error) {
	if len(cmds) == 1 {
		return encodeCommand(b.cfg.SubjectPrefix, cmds[0], n)
	}
	batch := make([]*outSend, len(cmds))
	for i, c := range cmds {
		body, err := marshalBody(c)
		if err != nil {
			return nil, err
		}
		batch[i] = &outSend{cmd: c, body: body}
	}
	return b.batchMsg(batch, n), nil
}

// handedID is the message ID of j's commands from the k-th on handed
// over (see handOver). A command accepted here and stored nowhere keeps
// its command ID, so that one stored already is stored once. A delivered
// message is stored again under its first handed command's ID and its
// stream sequence, "ID/seq", or, for the rest of a batch from its k-th
// command on, "ID/seq.k": the sequence is unique to the message it was
// delivered as (a command handed over a second time is stored again),
// and k to the part of it. IDs never hold '/' (see factum.ValidateID), so
// neither is a command's ID, nor a batch message's ("first/count/hash",
// see batchMsg: three parts, these two), nor the one the other.
func handedID(j *job, k int) string {
	if j.msg == nil {
		return j.cmd.ID
	}
	seq := strconv.FormatUint(j.seq, 10)
	if k == 0 {
		return j.cmd.ID + "/" + seq
	}
	return j.commands()[k].ID + "/" + seq + "." + strconv.Itoa(k)
}

// handOver publishes j's command (or batch), which its claim ended before
// it could run (or cut off while it ran), to its handed subject for the
// partition's next owner: see handOverFrom.
func (b *Bus) handOver(j *job) bool { return b.handOverFrom(j, 0) }

// handOverFrom publishes j's commands from the k-th on (see
// job.commands), which its claim ended before they could run (or cut off
// while they ran), to their handed subject for the partition's next owner
// (this instance again, maybe), which processes them and signals their
// outcomes. They are stored under handedID's message ID, and the message
// j was delivered as is acknowledged once the copy is stored. The lane
// hands its jobs over one after another, so one aggregate's commands are
// stored in the order the lane held them, and, since a new owner delivers
// the handed subjects first, ahead of every command of it stored later on
// its command subject. The publish counts as a forward of the partition's
// claim, so that a claim catching up waits for its delivery (see
// caughtUp), and a command queued here later for its processing here (see
// enter), and its stream sequence bounds what Shutdown's drain waits for
// on the partition (see quiet). It reports whether JetStream stored the
// commands.
func (b *Bus) handOverFrom(j *job, k int) bool {
	st := &b.state[j.n]
	st.mu.Lock()
	st.fwdInflight++
	st.mu.Unlock()
	seq, err := b.publishHanded(b.runCtx, j, k, handedID(j, k))
	st.mu.Lock()
	st.fwdInflight--
	if err == nil {
		st.fwdSeq = max(st.fwdSeq, seq)
		st.handedMax = max(st.handedMax, seq)
		if st.handed == nil {
			st.handed = map[uint64]struct{}{}
		}
		st.handed[seq] = struct{}{}
	}
	st.mu.Unlock()
	if err != nil {
		b.cfg.Logger.Warn("nats: a command could not be handed over to the stream when its claim ended", "context", b.parts.cfg.Context, "partition", j.n, "command", j.commands()[k].ID, "err", err)
		return false
	}
	if j.msg != nil {
		// The copy is stored: the message delivered here goes. Should the
		// acknowledgement be lost, the next owner processes the command
		// twice, the second time finding its request ID in the event
		// store.
		_ = b.latest(j).Ack()
		b.forget(j)
	}
	return true
}
