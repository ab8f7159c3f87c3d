package nats

import (
	"github.com/factum-go/factum"
)

// runMember is a job of a run (see runJobs) and what became of its
// commands so far: their signals, one per command processed, in order.
type runMember struct {
	job
	cmds []*factum.Command // the job's commands (job.commands)
	sigs []factum.Signal
}

// member makes j a member of a run.
func member(j *job) runMember { return runMember{job: *j, cmds: j.commands()} }

// done reports whether every command of m was processed.
func (m *runMember) done() bool { return len(m.sigs) == len(m.cmds) }

// gather returns the run that j, a job that entered its claim, starts
// (see runJobs): j and the jobs queued right behind it in its lane that
// join it (see topUp), taken without waiting; nil, allocating nothing,
// when none joins j, as always when j holds MaxRun commands or more. The
// first job taken that does not join is put in next (hasNext set), to be
// run after the run; closed is set when q was found closed.
func (b *Bus) gather(q chan job, j *job, next *job, hasNext, closed *bool) []runMember {
	run := b.topUp(q, nil, j, 1+len(j.more), next, hasNext, closed)
	if run == nil {
		return nil
	}
	run[0] = member(j)
	return run
}

// topUp takes the jobs queued in q right behind a run under head's claim
// of head's aggregate that join it, without waiting, while the run's
// commands not yet processed (pending) are fewer than BusConfig.MaxRun,
// and returns run with them appended (a first call, run nil, leaves
// run[0] for head). A job joins when it is not the stored copy of a
// command accepted here (LocalDurable: those run alone), is of head's
// aggregate and claim, and enters the claim (see enter: a command
// accepted here does not while commands handed over wait on the stream,
// which run first). The first job that does not join is put in next
// (hasNext set) and ends the taking, as a closed q does (closed set).
func (b *Bus) topUp(q chan job, run []runMember, head *job, pending int, next *job, hasNext, closed *bool) []runMember {
	for pending < b.cfg.MaxRun && !*hasNext && !*closed && !b.aborted.Load() {
		var nj job
		select {
		case got, ok := <-q:
			if !ok {
				*closed = true
				return run
			}
			nj = got
		default:
			return run
		}
		if nj.copy != nil || nj.token != head.token || !sameOutKey(nj.cmd, head.cmd) || !b.enter(&nj) {
			*next, *hasNext = nj, true
			return run
		}
		if run == nil {
			run = make([]runMember, 1, 8)
		}
		run = append(run, member(&nj))
		pending += 1 + len(nj.more)
	}
	return run
}

// runJoined runs j, a job that entered its claim and is not a stored copy,
// with the jobs queued behind it that join it (see gather, runJobs), and
// reports whether any did; if none did, j is left to the lane.
func (b *Bus) runJoined(q chan job, j *job, next *job, hasNext, closed *bool) bool {
	run := b.gather(q, j, next, hasNext, closed)
	if run == nil {
		return false
	}
	b.runJobs(q, run, next, hasNext, closed)
	return true
}

// runJobs processes run, two or more jobs of one aggregate that entered
// their claim (see gather), in their order, as runs of the executor
// (ProcessRun) of up to BusConfig.MaxRun commands each, taken across the
// jobs' bounds: commands accepted here, delivered commands and the
// commands of delivered batches alike, so that a lane holding an
// aggregate's commands appends them in as few runs as they fill. Between
// runs it tops the run up with the jobs queued behind it (see topUp).
// Once every command of a job was processed under a claim that held
// throughout, the job is settled: a delivered message is acknowledged
// and each command's signal emitted, in order (see emitAll). A run cut
// off ends it: see cutJobs.
func (b *Bus) runJobs(q chan job, run []runMember, next *job, hasNext, closed *bool) {
	n, token := run[0].n, run[0].token
	var cmds []*factum.Command
	for first := 0; first < len(run); {
		cmds = cmds[:0]
		for i := first; i < len(run) && len(cmds) < b.cfg.MaxRun; i++ {
			m := &run[i]
			k := min(len(m.cmds)-len(m.sigs), b.cfg.MaxRun-len(cmds))
			cmds = append(cmds, m.cmds[len(m.sigs):len(m.sigs)+k]...)
		}
		before := len(run[first].sigs)
		sigs, held, aborted := b.processUnder(n, token, cmds)
		for i, k := first, 0; k < len(sigs); i++ {
			m := &run[i]
			take := min(len(m.cmds)-len(m.sigs), len(sigs)-k)
			m.sigs = append(m.sigs, sigs[k:k+take]...)
			k += take
		}
		if !held || aborted {
			// Commands up to the run's last success have their outcomes;
			// so have those of the runs before it, which held.
			b.cutJobs(run[first:], before+lastSuccess(sigs)+1, held, aborted)
			return
		}
		end := first
		for end < len(run) && run[end].done() {
			end++
		}
		b.settleHeld(run[first:end])
		first = end
		if first == len(run) {
			// All settled: the lane goes on with its next job, which
			// starts a run of its own if others join it.
			return
		}
		pending := 0
		for i := first; i < len(run); i++ {
			pending += len(run[i].cmds) - len(run[i].sigs)
		}
		run = b.topUp(q, run, &run[first].job, pending, next, hasNext, closed)
	}
}

// settleHeld settles ms, members of a run whose every command was
// processed under a claim that held throughout: each delivered message
// is acknowledged (the latest delivery: a consumer made anew meanwhile
// delivered it again), each job leaves its claim and the lanes, and
// their signals are emitted, in order.
func (b *Bus) settleHeld(ms []runMember) {
	if len(ms) == 0 {
		return
	}
	var cmds []*factum.Command
	var sigs []factum.Signal
	if len(ms) == 1 {
		cmds, sigs = ms[0].cmds, ms[0].sigs
	}
	for i := range ms {
		m := &ms[i]
		if m.msg != nil {
			_ = b.latest(&m.job).Ack()
		}
		b.leave(&m.job)
		if len(ms) > 1 {
			cmds = append(cmds, m.cmds...)
			sigs = append(sigs, m.sigs...)
		}
	}
	b.emitAll(cmds, sigs)
	for i := range ms {
		b.done(&ms[i].job)
	}
}

// done counts j out of the lanes once it was settled.
func (b *Bus) done(j *job) {
	b.settled(j)
	b.finished.Add(uint64(1 + len(j.more)))
	b.busy.Add(-1)
}

// cutJobs settles ms, the members of a run not yet settled, when the run
// was cut off: the claim ended while it ran (held false), or the shutdown
// was cut short (aborted). cutAt counts the commands of ms, from the
// first one's first, that have their outcomes: those before it were
// processed under the claim and a later one of the run was appended, or
// they are the last success, so each outcome stands (a failure was
// decided on the state the aggregate kept; deciding it again would
// append it behind the later one).
//
// A command accepted here, with the claim held (aborted), is signalled as
// it ended, as dropped when it was not processed; else one before cutAt
// is signalled, and the rest are handed over to the stream, in order
// (see handOver), or, when that fails, signalled as ended under a claim
// that did not hold (see fenced).
// A delivered message all of whose commands have their outcomes is
// acknowledged and its signals emitted, in every mode: it ran under the
// claim as a message running alone does, and its next owner would decide
// a refused command of it again, behind the later one appended here.
// Else, with LocalFirst and the shutdown not cut short (see
// movesDelivered), it is handed over from its first command without an
// outcome on (see handOverFrom), the ones before signalled; else it stays
// on the stream for the partition's next owner, which processes it
// whole, finding the commands appended here by their request IDs.
func (b *Bus) cutJobs(ms []runMember, cutAt int, held, aborted bool) {
	s := 0 // the first command of m, counted as cutAt is
	// A shutdown cut short once every command of the run started cancels
	// the run without a command skipped: the commands after the run are
	// dropped all the same.
	dropped := aborted || b.aborted.Load()
	for i := range ms {
		m := &ms[i]
		e := s + len(m.cmds)
		if dropped {
			if d := len(m.cmds) - len(m.sigs); d > 0 {
				b.dropped.Add(int64(d))
			}
		}
		final := e <= cutAt
		if m.msg != nil {
			m.msg = b.latest(&m.job)
			if final {
				// Acknowledged before the job leaves its claim, which
				// release waits for: with LocalNever and LocalDurable no
				// hold keeps the next owner from delivering it again.
				_ = m.msg.Ack()
			}
		}
		b.leave(&m.job)
		switch {
		case m.local():
			sig := notProcessed(m.cmd, "this instance stopped owning the aggregate's partition before the command was processed; it was not appended")
			if aborted && len(m.sigs) == 0 {
				sig = notProcessed(m.cmd, "shut down before the command was processed; it was not appended")
			}
			if len(m.sigs) > 0 {
				sig = m.sigs[0]
			}
			switch {
			case held, final:
				b.emit(m.cmd, sig)
			case !b.handOver(&m.job):
				b.fenced(&m.job, sig)
			}
		case final:
			b.emitAll(m.cmds, m.sigs)
		case !b.movesDelivered(&m.job):
			// Stays on the stream.
		case s < cutAt:
			if b.handOverFrom(&m.job, cutAt-s) {
				b.emitAll(m.cmds[:cutAt-s], m.sigs[:cutAt-s])
			}
		default:
			b.handOver(&m.job)
		}
		b.done(&m.job)
		s = e
	}
}
