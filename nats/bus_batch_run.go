package nats

import (
	"fmt"
	"strconv"

	"github.com/factum-go/factum"
)

// decodeBatch decodes the body of a batch message (see HeaderBatch) whose
// header counts count commands: two or more of one aggregate, each valid.
func decodeBatch(data []byte, count string) ([]*factum.Command, error) {
	hint, _ := strconv.Atoi(count)
	cmds, err := decodeCommands(data, hint)
	if err != nil {
		return nil, fmt.Errorf("nats: batch message does not decode: %w", err)
	}
	if len(cmds) < 2 || strconv.Itoa(len(cmds)) != count {
		return nil, fmt.Errorf("nats: batch message holds %d commands, its header says %q", len(cmds), count)
	}
	for i, c := range cmds {
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("nats: batch message, command %d: %w", i, err)
		}
		if i > 0 && !sameOutKey(cmds[0], c) {
			return nil, fmt.Errorf("nats: batch message, command %d: aggregate %s, not the batch's %s", i, c.AggregateID, cmds[0].AggregateID)
		}
	}
	return cmds, nil
}

// sameOutKey reports whether a and b are commands of one aggregate, tenant
// included.
func sameOutKey(a, b *factum.Command) bool { return outKeyOf(a) == outKeyOf(b) }

// commands returns j's commands: its command, then those of its batch.
func (j *job) commands() []*factum.Command {
	if len(j.more) == 0 {
		return []*factum.Command{j.cmd}
	}
	return append([]*factum.Command{j.cmd}, j.more...)
}

// processBatch is process for a delivered batch (see processUnder). It
// returns every command's signal, in order, and whether the claim held
// throughout: false too when the shutdown was cut short, so that the
// message stays on the stream.
func (b *Bus) processBatch(j *job) ([]factum.Signal, bool) {
	sigs, held, aborted := b.processUnder(j.n, j.token, j.commands())
	return sigs, held && !aborted
}

// processUnder processes cmds, commands of one aggregate, in their order
// under partition n's claim token, as runs of up to BusConfig.MaxRun
// commands when the executor takes runs (command.RunExecutor), else one
// after another. Once the claim's context ended, or the shutdown was cut
// short (aborted), the commands not yet started are not processed (their
// signals say so). It returns every command's signal, in order, and
// whether the claim held throughout.
func (b *Bus) processUnder(n int, token uint64, cmds []*factum.Command) (sigs []factum.Signal, held, aborted bool) {
	sigs = make([]factum.Signal, len(cmds))
	ctx, w, ok := b.begin(n, token)
	if !ok {
		for i, c := range cmds {
			sigs[i] = notProcessed(c, "this instance stopped owning the aggregate's partition before the command was processed; it was not appended")
		}
		return sigs, false, false
	}
	skip := func(c *factum.Command) (factum.Signal, bool) {
		switch {
		case b.aborted.Load():
			aborted = true
			b.dropped.Add(1)
			return notProcessed(c, "shut down before the command was processed; it was not appended"), true
		case ctx.Err() != nil:
			return notProcessed(c, "this instance stopped owning the aggregate's partition before the command was processed; it was not appended"), true
		}
		return factum.Signal{}, false
	}
	for i := 0; i < len(cmds); {
		if k := min(len(cmds)-i, b.cfg.MaxRun); b.runs != nil && k > 1 {
			b.runs.ProcessRun(ctx, cmds[i:i+k], skip, func(m int, s factum.Signal) { sigs[i+m] = s })
			i += k
			continue
		}
		if s, skipped := skip(cmds[i]); skipped {
			sigs[i] = s
		} else {
			sigs[i] = b.proc.Process(ctx, cmds[i])
		}
		i++
	}
	held = ctx.Err() == nil
	w.End()
	return sigs, held, aborted
}

// lastSuccess returns the index of the last signal that succeeded, or -1.
func lastSuccess(sigs []factum.Signal) int {
	for i := len(sigs) - 1; i >= 0; i-- {
		if sigs[i].Succeeded() {
			return i
		}
	}
	return -1
}

// runBatch is run's processing of a delivered batch that entered its
// claim. The claim held throughout: the message is acknowledged once and
// every command's signal emitted, in order. Cut off, with LocalFirst (see
// movesDelivered), it keeps the rule of a cut run (see cutJobs): the
// commands up to the last one that succeeded have their outcomes (one after them was appended,
// so the ones that failed before it failed for good, and deciding them
// again would append them behind it); the commands after it are handed
// over (see handOverFrom), and once they are stored, the message is
// acknowledged and the others' signals emitted, in order, as a held run
// would. When none succeeded, the batch is handed over whole: the next
// owner finds the commands appended here by their request IDs and
// processes the others, in order. When the hand-over fails, or with the
// other modes, nothing is emitted and the message stays on the stream
// for the partition's next owner, which processes it whole.
func (b *Bus) runBatch(j *job) {
	sigs, held := b.processBatch(j)
	if held {
		_ = b.latest(j).Ack()
		b.leave(j)
		b.emitBatch(j, sigs, len(sigs))
		return
	}
	j.msg = b.latest(j)
	b.leave(j)
	if !b.movesDelivered(j) {
		return
	}
	switch last := lastSuccess(sigs); {
	case last < 0:
		b.handOver(j)
	case last == len(sigs)-1:
		// Every command has its outcome: nothing to hand over.
		_ = j.msg.Ack()
		b.forget(j)
		b.emitBatch(j, sigs, len(sigs))
	case b.handOverFrom(j, last+1):
		b.emitBatch(j, sigs, last+1)
	}
}

// emitBatch emits the signals of j's first k commands, in order (see
// emitAll).
func (b *Bus) emitBatch(j *job, sigs []factum.Signal, k int) {
	b.emitAll(j.commands()[:k], sigs[:k])
}

// emitAll emits sigs, the signals of cmds, in order: each run of commands
// of one origin through one SignalOriginBatch when the sink takes several
// at once (a run's commands are usually of one or two senders), else one
// by one (see emit).
func (b *Bus) emitAll(cmds []*factum.Command, sigs []factum.Signal) {
	if b.batch == nil {
		for i, c := range cmds {
			b.emit(c, sigs[i])
		}
		return
	}
	for i := 0; i < len(cmds); {
		o := cmds[i].Header[HeaderOrigin]
		n := i + 1
		for n < len(cmds) && cmds[n].Header[HeaderOrigin] == o {
			n++
		}
		if o == "" {
			for m := i; m < n; m++ {
				b.sink.Signal(sigs[m])
			}
		} else {
			b.batch.SignalOriginBatch(o, sigs[i:n])
		}
		i = n
	}
}
