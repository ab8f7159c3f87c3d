package command

import (
	"context"
	"sync"

	"github.com/factum-go/factum"
)

// RunExecutor is an Executor that also processes a run: commands of one
// aggregate, taken from a dispatcher lane together, in their arrival
// order. An executor may then decide them one after another on the
// aggregate's state and commit them together, rather than waiting for
// each command's commit before deciding the next.
//
// ProcessRun gives every command of cmds the outcome Process would give
// it were the commands processed one at a time in their order: the same
// codes, versions, duplicate flags and stored streams. Just before a
// command's processing starts (after the commands before it started),
// ProcessRun calls skip, when not nil, with the command: when skip
// reports true, the command is not processed and the signal skip returns
// is its own. It calls emit once for each command, with the command's
// index in cmds and its PROCESSED signal, from any goroutine, one call at
// a time and in the order of cmds, and returns when every command has
// been emitted. cmds are ProcessRun's until it returns; the caller reuses
// the slice afterwards.
//
// A command's signal may so wait for the commands after it: an executor
// committing a run's commands together answers each once the commit of
// its group is known, which waits for the decisions of the commands
// joining the group after it (at most eventstore.MaxGroup streams). Such
// an executor may know a command's place in the run by the context it
// hands the command's middleware; a middleware calling on with a context
// of its own may take its command out of the run's order (see the
// aggregate package's ProcessRun).
type RunExecutor interface {
	Executor
	// TakesRuns reports whether the executor gains by runs (it commits a
	// run's commands together); a dispatcher hands runs only to one that
	// does, as taking them costs a little.
	TakesRuns() bool
	ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(i int, sig factum.Signal))
}

// laneRun is one lane's buffers for the runs it takes, reused from run
// to run.
type laneRun struct {
	batch []*factum.Command
	subs  []subRun
}

// subRun is the commands of one aggregate among a lane's run, in their
// arrival order.
type subRun struct {
	cmds []*factum.Command
}

// sameAggregate reports whether a and b are commands of one aggregate, as
// an executor keys its states: by type and ID.
func sameAggregate(a, b *factum.Command) bool {
	return a.AggregateID.ID == b.AggregateID.ID && a.AggregateID.NamedAggregate == b.AggregateID.NamedAggregate
}

// split sorts batch into runs by aggregate, keeping each aggregate's
// arrival order. A lane's run holds few aggregates, so a linear search
// beats a map.
func (r *laneRun) split(batch []*factum.Command) []subRun {
	n := 0
	for _, c := range batch {
		j := 0
		for j < n && !sameAggregate(r.subs[j].cmds[0], c) {
			j++
		}
		if j == n {
			if n == len(r.subs) {
				r.subs = append(r.subs, subRun{})
			}
			r.subs[n].cmds = r.subs[n].cmds[:0]
			n++
		}
		r.subs[j].cmds = append(r.subs[j].cmds, c)
	}
	return r.subs[:n]
}

// processRuns processes each aggregate's run, and returns when all are
// done. The runs of several commands, each waiting for its commit, go
// concurrently, each in a goroutine but the last; the single commands
// between them go one after another on the lane's goroutine meanwhile, as
// a lane takes them without runs: a goroutine for each would cost more
// than it saves.
func (d *Dispatcher) processRuns(subs []subRun) {
	singles := 0
	for i := range subs {
		if len(subs[i].cmds) == 1 {
			singles++
		}
	}
	runs := len(subs) - singles
	var wg sync.WaitGroup
	for i := range subs {
		cmds := subs[i].cmds
		if len(cmds) == 1 {
			continue
		}
		if runs--; runs == 0 && singles == 0 {
			d.processRun(cmds) // the last one, on the lane's goroutine
			continue
		}
		wg.Go(func() { d.processRun(cmds) })
	}
	if singles > 0 {
		for i := range subs {
			if len(subs[i].cmds) == 1 {
				d.one(subs[i].cmds[0])
			}
		}
	}
	wg.Wait()
	for i := range subs {
		clear(subs[i].cmds)
	}
}

// processRun processes one aggregate's commands: a single one by Process,
// several by ProcessRun. Past the shutdown deadline those not yet started
// get the closed signal instead (skip), as queued commands do.
func (d *Dispatcher) processRun(cmds []*factum.Command) {
	if len(cmds) == 1 {
		d.one(cmds[0])
		return
	}
	d.runs.ProcessRun(d.runCtx, cmds, d.skipAt, d.emitAt)
}

// skip reports whether cmd, about to be processed, is past the shutdown
// deadline, and so gets the closed signal instead.
func (d *Dispatcher) skip(cmd *factum.Command) (factum.Signal, bool) {
	if !d.aborted.Load() {
		return factum.Signal{}, false
	}
	d.dropped.Add(1)
	return closedSignal(cmd), true
}
