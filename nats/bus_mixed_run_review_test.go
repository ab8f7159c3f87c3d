package nats

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// abortRunExec takes runs, asking skip about each command just before it
// starts, as aggregate's executor does; it holds the command of request
// "gate" until gate is closed and the one of request "hold" until its
// context ends, closing started when it starts, and succeeds with any
// other.
type abortRunExec struct {
	runExec
	gate, started chan struct{}
}

func (e *abortRunExec) step(ctx context.Context, c *factum.Command) factum.Signal {
	switch c.RequestID {
	case "gate":
		<-e.gate
	case "hold":
		close(e.started)
		<-ctx.Done()
	}
	return processed(c)
}

func (e *abortRunExec) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	return e.step(ctx, cmd)
}

func (e *abortRunExec) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	stepRun(cmds, skip, emit, func(c *factum.Command) factum.Signal { return e.step(ctx, c) })
}

// A Shutdown cut short while the last command of a run is under way
// counts the commands of a batch straddling the run that were not
// processed: behind the gate, x and the batch hold, b1, b2 run as x and
// hold (MaxRun 2), cut by the shutdown; b1 and b2 are dropped, as they
// are when the batch runs on its own.
func TestShutdownCutShortCountsTheRestOfABatchStraddlingARun(t *testing.T) {
	exec := &abortRunExec{gate: make(chan struct{}), started: make(chan struct{})}
	open := sync.OnceFunc(func() { close(exec.gate) })
	t.Cleanup(open)
	bus, n, w := drainBusWith(t, drainCase{"LocalNever/in-process", LocalNever, inProcessWorld}, BusConfig{MaxRun: 2}, nil, exec)
	storeCommand(t, n, w, "gate")
	waitFor(t, 10*time.Second, "the gate to be in process", func() bool { return bus.busy.Load() == 1 })
	storeCommand(t, n, w, "x")
	sendBatchMsg(t, bus, "t-1", "hold", "b1", "b2")
	waitFor(t, 10*time.Second, "x and the batch to be queued behind the gate", func() bool { return bus.busy.Load() == 3 })
	open()
	select {
	case <-exec.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the held command did not start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := bus.Shutdown(ctx)
	if err == nil || !strings.Contains(err.Error(), "shutdown deadline passed") {
		t.Fatalf("Shutdown: %v, want the deadline passed", err)
	}
	if got := bus.dropped.Load(); got != 2 {
		t.Errorf("%d commands counted dropped (%v), want b1 and b2", got, err)
	}
}

// heldRunExec takes runs, asking skip about each command just before it
// starts; it holds the command whose request ID is a key of gates until
// that gate is closed, and records the request IDs of the commands it
// started and of the signals it was given.
type heldRunExec struct {
	runExec
	gates map[string]chan struct{}

	smu       sync.Mutex
	began     []string // the request IDs of the commands started, in order
	signalled []string
}

func (e *heldRunExec) step(c *factum.Command) factum.Signal {
	e.smu.Lock()
	e.began = append(e.began, c.RequestID)
	e.smu.Unlock()
	if g, ok := e.gates[c.RequestID]; ok {
		<-g
	}
	return processed(c)
}

func (e *heldRunExec) Process(_ context.Context, cmd *factum.Command) factum.Signal {
	e.noteAlone(cmd)
	return e.step(cmd)
}

func (e *heldRunExec) ProcessRun(_ context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	e.noteRun(cmds)
	stepRun(cmds, skip, emit, e.step)
}

func (e *heldRunExec) Signal(sig factum.Signal) {
	e.smu.Lock()
	defer e.smu.Unlock()
	e.signalled = append(e.signalled, sig.RequestID)
}

func (e *heldRunExec) signals() []string {
	e.smu.Lock()
	defer e.smu.Unlock()
	return slices.Clone(e.signalled)
}

// A job whose commands all ended in a run that held is settled when that
// run ends, not held back by the runs of the jobs behind it: behind the
// gate, l1 and the batch b0 to b4 run as l1, b0, b1, b2 and b3, b4
// (MaxRun 4); l1 is signalled while b3 is under way.
func TestAJobIsSettledWhenItsLastRunEnds(t *testing.T) {
	gate, b3 := make(chan struct{}), make(chan struct{})
	open, openB3 := sync.OnceFunc(func() { close(gate) }), sync.OnceFunc(func() { close(b3) })
	exec := &heldRunExec{gates: map[string]chan struct{}{"gate": gate, "b3": b3}}
	bus, _, _ := drainBusWith(t, drainCase{"LocalFirst/in-process", LocalFirst, inProcessWorld}, BusConfig{MaxRun: 4}, nil, exec)
	// Registered after the bus's Shutdown, so run before it: a lane held
	// would hold it up.
	t.Cleanup(open)
	t.Cleanup(openB3)
	sendLocal(t, bus, "t-1", "gate")
	waitFor(t, 10*time.Second, "the gate to be in process", func() bool {
		exec.smu.Lock()
		defer exec.smu.Unlock()
		return slices.Contains(exec.began, "gate")
	})
	sendLocal(t, bus, "t-1", "l1")
	sendBatchMsg(t, bus, "t-1", "b0", "b1", "b2", "b3", "b4")
	waitFor(t, 10*time.Second, "l1 and the batch to be queued behind the gate", func() bool { return bus.busy.Load() == 3 })
	open()
	waitFor(t, 10*time.Second, "l1 to be signalled while b3 is held", func() bool { return slices.Contains(exec.signals(), "l1") })
	openB3()
	waitFor(t, 10*time.Second, "every job to leave the lanes", func() bool { return bus.busy.Load() == 0 })
	if runs, alone := exec.seen(); fmt.Sprint(runs) != "[4 2]" || fmt.Sprint(alone) != "[gate]" {
		t.Errorf("runs %v, alone %v; want runs [4 2], alone [gate]", runs, alone)
	}
	want := []string{"gate", "l1", "b0", "b1", "b2", "b3", "b4"}
	if got := exec.signals(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("signalled %v, want %v", got, want)
	}
}

// Between runs the lane tops the run up with the jobs queued behind it:
// behind the gate, l1, the batch b0 to b4, l2 and l3 run as l1, b0, b1,
// b2 and b3, b4, l2, l3 (MaxRun 4), where a run ending with the batch
// would leave l2 and l3 a third.
func TestARunIsToppedUpBetweenRuns(t *testing.T) {
	exec := &gatedRunExec{gate: make(chan struct{}), held: make(chan struct{})}
	open := sync.OnceFunc(func() { close(exec.gate) })
	bus, _, _ := drainBusWith(t, drainCase{"LocalFirst/in-process", LocalFirst, inProcessWorld}, BusConfig{MaxRun: 4}, nil, exec)
	t.Cleanup(open) // before the bus's Shutdown, which a lane held would hold up
	sendLocal(t, bus, "t-1", "gate")
	<-exec.held
	sendLocal(t, bus, "t-1", "l1")
	sendBatchMsg(t, bus, "t-1", "b0", "b1", "b2", "b3", "b4")
	waitFor(t, 10*time.Second, "l1 and the batch to be queued", func() bool { return bus.busy.Load() == 3 })
	sendLocal(t, bus, "t-1", "l2")
	sendLocal(t, bus, "t-1", "l3")
	open()
	runs, alone := exec.waitSeen(t, 9)
	if fmt.Sprint(runs) != "[4 4]" || fmt.Sprint(alone) != "[gate]" {
		t.Errorf("runs %v, alone %v; want runs [4 4], alone [gate]", runs, alone)
	}
	waitFor(t, 10*time.Second, "every job to leave the lanes", func() bool { return bus.busy.Load() == 0 })
	want := []string{"gate", "l1", "b0", "b1", "b2", "b3", "b4", "l2", "l3"}
	exec.omu.Lock()
	signalled := slices.Clone(exec.signalled)
	exec.omu.Unlock()
	if fmt.Sprint(signalled) != fmt.Sprint(want) {
		t.Errorf("signalled %v, want %v", signalled, want)
	}
}
