package nats

import (
	"github.com/factum-go/factum"
)

// gather returns the run that j, a command accepted here that entered
// its claim, starts: j and the jobs queued right behind it in its lane
// that are commands accepted here of its aggregate under its claim and
// enter it too, taken without waiting, up to BusConfig.MaxRun; nil,
// allocating nothing, when none joins j, as always with MaxRun 1. The
// first job taken that does not join is put in next (hasNext set), to be
// run after the run; closed is set when q was found closed.
func (b *Bus) gather(q chan job, j *job, next *job, hasNext, closed *bool) []job {
	var run []job
	for max(len(run), 1) < b.cfg.MaxRun && !b.aborted.Load() {
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
		if !nj.local() || nj.token != j.token || !sameOutKey(nj.cmd, j.cmd) || !b.enter(&nj) {
			*next, *hasNext = nj, true
			return run
		}
		if run == nil {
			run = append(make([]job, 0, 8), *j)
		}
		run = append(run, nj)
	}
	return run
}

// runLocal processes run, two or more commands accepted here of one
// aggregate that entered their claim (see gather), under one claim, as one
// run of the executor (ProcessRun), and decides once every command's
// outcome is known. The claim held throughout: each is signalled, in
// order. Cut off: the commands after the last one that succeeded are
// handed over to the stream, in order, as a single command cut off is
// (see run); the ones before it are signalled with their outcomes, which
// are final (a later command of the run was decided on the state they
// left and appended, so one handed over, or retried, would be decided
// behind it), and the last success as a single command cut off is (see
// fenced).
func (b *Bus) runLocal(run []job) {
	cmds := make([]*factum.Command, len(run))
	for i := range run {
		cmds[i] = run[i].cmd
	}
	// Past the Shutdown deadline the members not started are answered
	// as dropped (see processUnder), and none is handed over: held stays as the
	// claim's context says.
	sigs, held, _ := b.processUnder(run[0].n, run[0].token, cmds)
	last := -1
	if !held {
		last = lastSuccess(sigs)
	}
	for i := range run {
		m := &run[i]
		b.leave(m)
		switch {
		case held, i < last:
			// Before the last success, a failure is final: a later
			// command of the aggregate was decided on the state it left
			// and appended.
			b.emit(m.cmd, sigs[i])
		case i > last && b.handOver(m):
		default:
			b.fenced(m, sigs[i])
		}
	}
	for i := range run {
		b.settled(&run[i])
		b.finished.Add(1)
		b.busy.Add(-1)
	}
}
