package nats

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// runExec takes runs and records how it was handed each command: the
// sizes of the runs ProcessRun took, and the commands Process took alone.
type runExec struct {
	mu    sync.Mutex
	runs  []int
	alone []string
}

func (e *runExec) Process(_ context.Context, cmd *factum.Command) factum.Signal {
	e.noteAlone(cmd)
	return processed(cmd)
}

func (e *runExec) TakesRuns() bool { return true }

func (e *runExec) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	e.noteRun(cmds)
	stepRun(cmds, skip, emit, processed)
}

// noteAlone records cmd as taken alone.
func (e *runExec) noteAlone(cmd *factum.Command) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.alone = append(e.alone, cmd.RequestID)
}

// noteRun records the size of the run cmds.
func (e *runExec) noteRun(cmds []*factum.Command) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runs = append(e.runs, len(cmds))
}

// processed returns the signal of c processed.
func processed(c *factum.Command) factum.Signal {
	return factum.Signal{CommandID: c.ID, RequestID: c.RequestIDOrID(), Stage: factum.StageProcessed, AggregateID: c.AggregateID}
}

// stepRun emits, for each command of cmds in order, skip's signal when
// skip skips it and step's otherwise, asking skip just before the
// command would start, as aggregate's executor does.
func stepRun(cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal), step func(*factum.Command) factum.Signal) {
	for i, c := range cmds {
		if s, skipped := skip(c); skipped {
			emit(i, s)
			continue
		}
		emit(i, step(c))
	}
}

func (e *runExec) Signal(factum.Signal) {}

func (e *runExec) seen() (runs []int, alone []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int(nil), e.runs...), append([]string(nil), e.alone...)
}

// waitSeen waits until e was handed n commands, in runs or alone, and
// returns how (see seen).
func (e *runExec) waitSeen(t *testing.T, n int) (runs []int, alone []string) {
	t.Helper()
	waitFor(t, 10*time.Second, fmt.Sprintf("%d commands to be processed", n), func() bool {
		runs, alone := e.seen()
		sum := len(alone)
		for _, r := range runs {
			sum += r
		}
		return sum == n
	})
	return e.seen()
}

// BusConfig.MaxRun bounds the runs a delivered batch is processed in:
// MaxRun 1 processes its commands one at a time, in order (ProcessRun is
// never called), 2 in runs of two, 0 (command.DefaultMaxRun) as one run.
func TestMaxRunBoundsTheRunsOfABatch(t *testing.T) {
	for _, c := range []struct {
		maxRun int
		runs   []int
		alone  []string
	}{
		{1, nil, []string{"b0", "b1", "b2", "b3", "b4"}},
		{2, []int{2, 2}, []string{"b4"}},
		{0, []int{5}, nil},
	} {
		t.Run(fmt.Sprint("MaxRun=", c.maxRun), func(t *testing.T) {
			exec := &runExec{}
			bus, _, _ := drainBusWith(t, drainCase{"LocalNever/in-process", LocalNever, inProcessWorld}, BusConfig{MaxRun: c.maxRun}, nil, exec)
			sendBatchMsg(t, bus, "t-1", "b0", "b1", "b2", "b3", "b4")
			runs, alone := exec.waitSeen(t, 5)
			if fmt.Sprint(runs) != fmt.Sprint(c.runs) || fmt.Sprint(alone) != fmt.Sprint(c.alone) {
				t.Errorf("runs %v, alone %v; want runs %v, alone %v", runs, alone, c.runs, c.alone)
			}
		})
	}
}

// A negative MaxRun is refused, as the other negative settings are.
func TestNegativeMaxRunIsRefused(t *testing.T) {
	w := inProcessWorld(t, 1, 3*time.Second)
	n := w.node(t, "a", BusConfig{})
	cfg := BusConfig{JetStream: n.js, Partitions: n.parts, MaxRun: -1}
	if err := cfg.defaults(); err == nil {
		t.Error("MaxRun -1 accepted")
	}
}
