package nats

import (
	"context"
	"fmt"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/aggregate"
	"github.com/factum-go/factum/command"
)

// plainExec is an executor that answers every command with a signal
// naming no origin, and reports the cache observer each command found.
type plainExec struct{ seen []aggregate.CacheObserver }

func (p *plainExec) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	p.seen = append(p.seen, aggregate.CacheObserverFrom(ctx))
	return factum.Signal{CommandID: cmd.ID, Stage: factum.StageProcessed}
}

type forgetExec struct{ *plainExec }

func (forgetExec) Forget(factum.AggregateID) {}

// runsExec takes runs: it skips what skip reports and processes the
// others one by one, as the aggregate package's executor does.
type runsExec struct {
	*plainExec
	takes bool
}

func (r runsExec) TakesRuns() bool { return r.takes }

func (r runsExec) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	for i, c := range cmds {
		if skip != nil {
			if sig, ok := skip(c); ok {
				emit(i, sig)
				continue
			}
		}
		emit(i, r.Process(ctx, c))
	}
}

type forgetRunsExec struct{ runsExec }

func (forgetRunsExec) Forget(factum.AggregateID) {}

// Signals.Bus's executor keeps the wrapped one's runs and cache
// invalidation, in every combination, and names each signal of a run its
// command's origin, a skipped command's too, unless the signal names one;
// a run whose commands all have the origin-only header finds the
// origin's observer, so that their streams keep the shared header.
func TestOriginExecutorKeepsRunsAndForgetter(t *testing.T) {
	only := map[string]string{HeaderOrigin: "a"}
	hw := originHeader{only: only, origin: "a"}
	for _, tc := range []struct {
		name          string
		proc          func(*plainExec) command.Executor
		runs, forgets bool
	}{
		{"plain", func(p *plainExec) command.Executor { return p }, false, false},
		{"forgets", func(p *plainExec) command.Executor { return forgetExec{p} }, false, true},
		{"runs", func(p *plainExec) command.Executor { return runsExec{p, true} }, true, false},
		{"runs and forgets", func(p *plainExec) command.Executor { return forgetRunsExec{runsExec{p, true}} }, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &plainExec{}
			exec := originExecutor(tc.proc(p), hw)
			if _, ok := exec.(aggregate.Forgetter); ok != tc.forgets {
				t.Errorf("aggregate.Forgetter %v, want %v", ok, tc.forgets)
			}
			r, ok := exec.(command.RunExecutor)
			if ok != tc.runs {
				t.Fatalf("command.RunExecutor %v, want %v", ok, tc.runs)
			}
			if sig := exec.Process(context.Background(), &factum.Command{ID: "p", Header: map[string]string{HeaderOrigin: "b"}}); sig.Origin != "b" {
				t.Errorf("Process: origin %q, want b", sig.Origin)
			}
			if !ok {
				return
			}
			if !r.TakesRuns() {
				t.Error("TakesRuns false, want the wrapped executor's true")
			}
			cmds := []*factum.Command{
				{ID: "c0", Header: map[string]string{HeaderOrigin: "b"}},
				{ID: "c1", Header: map[string]string{HeaderOrigin: "c"}},
				{ID: "c2", Header: map[string]string{HeaderOrigin: "b"}},
				{ID: "c3", Header: map[string]string{HeaderOrigin: "c"}},
			}
			skip := func(c *factum.Command) (factum.Signal, bool) {
				switch c.ID {
				case "c1":
					return factum.Signal{CommandID: c.ID, Duplicate: true}, true
				case "c3":
					return factum.Signal{CommandID: c.ID, Origin: "d"}, true
				}
				return factum.Signal{}, false
			}
			var got []string
			r.ProcessRun(context.Background(), cmds, skip, func(i int, sig factum.Signal) {
				got = append(got, fmt.Sprintf("%d:%s@%s", i, sig.CommandID, sig.Origin))
			})
			if want := "[0:c0@b 1:c1@c 2:c2@b 3:c3@d]"; fmt.Sprint(got) != want {
				t.Errorf("signals %v, want %s", got, want)
			}

			p.seen = nil
			r.ProcessRun(context.Background(), []*factum.Command{{ID: "k0", Header: only}, {ID: "k1", Header: only}}, nil, func(int, factum.Signal) {})
			if len(p.seen) != 2 {
				t.Fatalf("%d commands processed of the origin-only run, want 2", len(p.seen))
			}
			for i, o := range p.seen {
				if h, ok := o.(originHeader); !ok || h.origin != "a" {
					t.Errorf("origin-only run: command %d found the observer %#v, want the origin's", i, o)
				}
			}
		})
	}
}

// A wrapped executor that takes no runs keeps saying so.
func TestOriginExecutorTakesRunsAsTheWrapped(t *testing.T) {
	exec := originExecutor(runsExec{&plainExec{}, false}, originHeader{})
	if r, ok := exec.(command.RunExecutor); !ok || r.TakesRuns() {
		t.Errorf("RunExecutor %v, TakesRuns true; want a RunExecutor that takes no runs", ok)
	}
}
