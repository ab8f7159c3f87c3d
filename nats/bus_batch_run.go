package nats

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/factum-go/factum"
)

// decodeBatch decodes the body of a batch message (see HeaderBatch) whose
// header counts count commands: two or more of one aggregate, each valid.
func decodeBatch(data []byte, count string) ([]*factum.Command, error) {
	var ws []wireCommand
	if err := json.Unmarshal(data, &ws); err != nil {
		return nil, fmt.Errorf("nats: batch message does not decode: %w", err)
	}
	if len(ws) < 2 || strconv.Itoa(len(ws)) != count {
		return nil, fmt.Errorf("nats: batch message holds %d commands, its header says %q", len(ws), count)
	}
	cmds := make([]*factum.Command, len(ws))
	for i := range ws {
		c := &ws[i].Command
		c.Body = ws[i].Body
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("nats: batch message, command %d: %w", i, err)
		}
		if i > 0 && !sameOutKey(cmds[0], c) {
			return nil, fmt.Errorf("nats: batch message, command %d: aggregate %s, not the batch's %s", i, c.AggregateID, cmds[0].AggregateID)
		}
		cmds[i] = c
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

// processBatch is process for a delivered batch: its commands run in
// their order under one claim, as one run when the executor takes runs
// (command.RunExecutor), else one after another. Once the claim's context
// ended, the commands not yet started are not processed (their signals say
// so). It returns every command's signal, in order, and whether the claim
// held throughout.
func (b *Bus) processBatch(j *job) ([]factum.Signal, bool) {
	cmds := j.commands()
	sigs := make([]factum.Signal, len(cmds))
	ctx, w, ok := b.parts.Begin(b.procCtx, j.n, j.token)
	for !ok && b.awaitClaim(b.runCtx, j.n, j.token) {
		ctx, w, ok = b.parts.Begin(b.procCtx, j.n, j.token)
	}
	if !ok {
		for i, c := range cmds {
			sigs[i] = notProcessed(c, "this instance stopped owning the aggregate's partition before the command was processed; it was not appended")
		}
		return sigs, false
	}
	skip := func(c *factum.Command) (factum.Signal, bool) {
		if ctx.Err() == nil {
			return factum.Signal{}, false
		}
		return notProcessed(c, "this instance stopped owning the aggregate's partition before the command was processed; it was not appended"), true
	}
	if b.runs != nil {
		b.runs.ProcessRun(ctx, cmds, skip, func(i int, s factum.Signal) { sigs[i] = s })
	} else {
		for i, c := range cmds {
			if s, skipped := skip(c); skipped {
				sigs[i] = s
				continue
			}
			sigs[i] = b.proc.Process(ctx, c)
		}
	}
	held := ctx.Err() == nil
	w.End()
	return sigs, held
}

// runBatch is run's processing of a delivered batch that entered its
// claim, decided for the whole message as for one delivered command: the
// claim held throughout, the message is acknowledged once and every
// command's signal emitted, in order; cut off, nothing is emitted and the
// message stays on the stream for the partition's next owner, or, when
// movesDelivered says so and a command of it did not succeed, is handed
// over whole (see handOver): the next owner finds the commands appended
// here by their request IDs and processes the others, in order.
func (b *Bus) runBatch(j *job) {
	sigs, held := b.processBatch(j)
	if !held {
		j.msg = b.latest(j)
		b.leave(j)
		if b.movesDelivered(j) && !allSucceeded(sigs) {
			b.handOver(j)
		}
		return
	}
	_ = b.latest(j).Ack()
	b.leave(j)
	for i, c := range j.commands() {
		b.emit(c, sigs[i])
	}
}

func allSucceeded(sigs []factum.Signal) bool {
	for _, s := range sigs {
		if !s.Succeeded() {
			return false
		}
	}
	return true
}
