package aggregate

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/factum-go/factum"
)

// runIndex holds an executor's runs under way by aggregate, so that an
// attempt finds its run member by its command when a middleware called
// the rest of the chain with a context lacking the run's values (one
// detached from the caller's, context.Background()): the command keeps
// its place in the run's order then too.
type runIndex[S any] struct {
	n    atomic.Int32 // len(runs): an executor without runs looks nothing up
	mu   sync.RWMutex // commands outside runs only read it
	runs map[string]*run[S]
}

// add indexes r, of one aggregate, until remove; it reports false when
// another run of the aggregate is indexed (a second caller's), which its
// commands then find by their context only.
func (x *runIndex[S]) add(r *run[S]) bool {
	id := r.members[0].cmd.AggregateID.ID
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.runs[id]; ok {
		return false
	}
	if x.runs == nil {
		x.runs = make(map[string]*run[S])
	}
	x.runs[id] = r
	x.n.Add(1)
	return true
}

// remove drops r, which add indexed.
func (x *runIndex[S]) remove(r *run[S]) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.runs, r.members[0].cmd.AggregateID.ID)
	x.n.Add(-1)
}

// member returns the member of an indexed run that cmd is (the very
// command the run holds), or nil.
func (x *runIndex[S]) member(cmd *factum.Command) *runMember[S] {
	if x.n.Load() == 0 {
		return nil
	}
	x.mu.RLock()
	r := x.runs[cmd.AggregateID.ID]
	x.mu.RUnlock()
	if r == nil {
		return nil
	}
	for i := range r.members {
		if r.members[i].cmd == cmd {
			return &r.members[i]
		}
	}
	return nil
}

// memberOf returns the run member cmd is, from the context of its
// attempt or, when that lacks the run's values, by the command itself;
// nil outside a run of this executor's.
func (p *processor[S]) memberOf(ctx context.Context, cmd *factum.Command) *runMember[S] {
	m, _ := ctx.Value(runKey{}).(*runMember[S])
	if m == nil {
		return p.runs.member(cmd)
	}
	if m.r.p != p || m.cmd.ID != cmd.ID || m.cmd.AggregateID.ID != cmd.AggregateID.ID {
		return nil
	}
	return m
}
