package command_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// runRecorder is a RunExecutor that records the runs it is given; a
// command of the aggregate "barrier" holds its lane until released.
type runRecorder struct {
	started, release chan struct{}
	mu               sync.Mutex
	runs             [][]*factum.Command
	order            map[string][]int // aggregate -> seq, as processed
}

func (r *runRecorder) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	if cmd.AggregateID.ID == "barrier" {
		r.started <- struct{}{}
		<-r.release
	} else {
		r.mu.Lock()
		r.order[cmd.AggregateID.ID] = append(r.order[cmd.AggregateID.ID], cmd.Body.(int))
		r.mu.Unlock()
	}
	return factum.Signal{CommandID: cmd.ID, Stage: factum.StageProcessed, Code: factum.CodeOk}
}

func (r *runRecorder) TakesRuns() bool { return true }

func (r *runRecorder) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	r.mu.Lock()
	r.runs = append(r.runs, append([]*factum.Command(nil), cmds...))
	r.mu.Unlock()
	for i, c := range cmds {
		if sig, ok := skip(c); ok {
			emit(i, sig)
			continue
		}
		emit(i, r.Process(ctx, c))
	}
}

// A lane hands ProcessRun what is queued behind the command in progress,
// each aggregate's commands in their order, at most MaxRun at once; with
// MaxRun 1 it never does.
func TestDispatcherRuns(t *testing.T) {
	for _, maxRun := range []int{0, 1, 5} {
		t.Run(fmt.Sprint("MaxRun=", maxRun), func(t *testing.T) {
			r := &runRecorder{started: make(chan struct{}), release: make(chan struct{}), order: map[string][]int{}}
			d, err := command.NewDispatcher(r, nopSink{}, command.DispatcherConfig{Lanes: 1, MaxRun: maxRun})
			if err != nil {
				t.Fatal(err)
			}
			d.Start(t.Context())
			named := factum.NamedAggregate{Context: "shop", Aggregate: "cart"}
			send := func(id string, seq int) {
				t.Helper()
				c := factum.NewCommand(named.WithID(id), seq)
				if err := d.Send(t.Context(), &c); err != nil {
					t.Fatal(err)
				}
			}
			send("barrier", 0)
			<-r.started
			const per = 12
			for i := range per {
				for _, id := range []string{"a", "b", "c"} {
					send(id, i)
				}
			}
			close(r.release)
			if err := d.Shutdown(t.Context()); err != nil {
				t.Fatal(err)
			}
			limit := maxRun
			if limit == 0 {
				limit = command.DefaultMaxRun
			}
			total := 0
			for _, run := range r.runs {
				total += len(run)
				if len(run) < 2 || len(run) > limit {
					t.Fatalf("a run of %d commands, MaxRun %d", len(run), limit)
				}
				for _, c := range run[1:] {
					if c.AggregateID != run[0].AggregateID {
						t.Fatalf("a run holds commands of %s and %s", run[0].AggregateID.ID, c.AggregateID.ID)
					}
				}
			}
			if maxRun == 1 && len(r.runs) > 0 {
				t.Fatalf("%d runs with MaxRun 1", len(r.runs))
			}
			if maxRun != 1 && total == 0 {
				t.Fatal("no run although commands were queued")
			}
			for _, id := range []string{"a", "b", "c"} {
				got := r.order[id]
				for i := range per {
					if i >= len(got) || got[i] != i {
						t.Fatalf("aggregate %s processed %v, want 0..%d in order", id, got, per-1)
					}
				}
			}
		})
	}
}

func TestDispatcherRefusesNegativeMaxRun(t *testing.T) {
	_, err := command.NewDispatcher(nopProcessor{}, nopSink{}, command.DispatcherConfig{MaxRun: -1})
	if factum.CodeOf(err) != factum.CodeIllegalArgument {
		t.Fatalf("MaxRun -1: %v, want IllegalArgument", err)
	}
}
