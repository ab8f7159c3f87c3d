package nats

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// gatedRunExec is a runExec that records the order it processed commands in
// and the signals it was given, and holds the command whose request ID
// is "gate", alone or in a run, until gate is closed, closing held when
// it does.
type gatedRunExec struct {
	runExec
	gate, held chan struct{}

	omu       sync.Mutex
	order     []string
	signalled []string
}

func (e *gatedRunExec) record(cmds ...*factum.Command) {
	e.omu.Lock()
	defer e.omu.Unlock()
	for _, c := range cmds {
		e.order = append(e.order, c.RequestID)
	}
}

func (e *gatedRunExec) hold(cmd *factum.Command) {
	if cmd.RequestID == "gate" {
		close(e.held)
		<-e.gate
	}
}

func (e *gatedRunExec) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	e.hold(cmd)
	e.record(cmd)
	return e.runExec.Process(ctx, cmd)
}

func (e *gatedRunExec) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	for _, c := range cmds {
		e.hold(c)
	}
	e.record(cmds...)
	e.runExec.ProcessRun(ctx, cmds, skip, emit)
}

func (e *gatedRunExec) Signal(sig factum.Signal) {
	e.omu.Lock()
	defer e.omu.Unlock()
	e.signalled = append(e.signalled, sig.RequestID)
}

// sendLocal sends a command of aggregate id accepted here (LocalFirst:
// its partition is bus's), as the gateway makes it.
func sendLocal(t *testing.T, bus *Bus, id, req string) {
	t.Helper()
	cmd := tallyCommand(id, req)
	cmd.AllowCreate = true
	cmd.AggregateID.Tenant = factum.DefaultTenant
	if err := bus.Send(context.Background(), &cmd); err != nil {
		t.Fatal(err)
	}
}

// The jobs of one aggregate queued behind one another in a lane, commands
// accepted here and delivered commands and batches alike, run together in
// their order, as runs of MaxRun commands taken across the jobs' bounds:
// behind the held command, l1, a batch of three, l2 and a batch of five
// run as 4, 4 and 2, where each job on its own would take five runs. Each
// command is signalled once, in order, and every delivered message is
// acknowledged.
func TestQueuedJobsOfAnAggregateRunTogether(t *testing.T) {
	exec := &gatedRunExec{gate: make(chan struct{}), held: make(chan struct{})}
	open := sync.OnceFunc(func() { close(exec.gate) })
	t.Cleanup(open)
	bus, _, _ := drainBusWith(t, drainCase{"LocalFirst/in-process", LocalFirst, inProcessWorld}, BusConfig{MaxRun: 4}, nil, exec)
	sendLocal(t, bus, "t-1", "gate")
	<-exec.held
	sendLocal(t, bus, "t-1", "l1")
	sendBatchMsg(t, bus, "t-1", "a0", "a1", "a2")
	waitQueued(t, bus, 3)
	sendLocal(t, bus, "t-1", "l2")
	sendBatchMsg(t, bus, "t-1", "b0", "b1", "b2", "b3", "b4")
	waitQueued(t, bus, 5)
	open()
	want := []string{"gate", "l1", "a0", "a1", "a2", "l2", "b0", "b1", "b2", "b3", "b4"}
	runs, alone := exec.waitSeen(t, len(want))
	if fmt.Sprint(runs) != "[4 4 2]" || fmt.Sprint(alone) != "[gate]" {
		t.Errorf("runs %v, alone %v; want runs [4 4 2], alone [gate]", runs, alone)
	}
	waitFor(t, 10*time.Second, "every job to leave the lanes", func() bool { return bus.busy.Load() == 0 })
	exec.omu.Lock()
	order, signalled := slices.Clone(exec.order), slices.Clone(exec.signalled)
	exec.omu.Unlock()
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("processed %v, want %v", order, want)
	}
	if fmt.Sprint(signalled) != fmt.Sprint(want) {
		t.Errorf("signalled %v, want %v", signalled, want)
	}
	waitFor(t, 10*time.Second, "the delivered messages to be acknowledged", func() bool {
		return settledBus(bus) && unacknowledged(t, bus) == 0
	})
}

// unacknowledged returns how many messages bus's consumer of partition 0
// delivered and was not told are done, -1 while it cannot tell.
func unacknowledged(t *testing.T, bus *Bus) int {
	t.Helper()
	bus.mu.Lock()
	pc := bus.consumers[0]
	bus.mu.Unlock()
	if pc == nil {
		return -1
	}
	pc.mu.Lock()
	cons := pc.cons
	pc.mu.Unlock()
	if cons == nil {
		return -1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := cons.Info(ctx)
	if err != nil {
		return -1
	}
	return info.NumAckPending
}

// A run of queued jobs of both kinds, r0 accepted here, a batch of r1, r2
// and r3 delivered, r4 accepted here, cut off while r2 is under way (the
// partition given up): the commands up to the last one that succeeded
// stand, and the rest are handed over, in order, the batch's from its
// first without an outcome on, ahead of r4. Each aggregate so stores pre,
// r0, r1, r2, r3, r4, in order, whether its partition was given up or
// kept, and the commands after the cut are processed by the next owner.
func TestMixedRunCutHandsTheRestOverInOrder(t *testing.T) {
	const partitions = 2
	f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), LocalFirst)
	openPre := f.holdPre(t)
	a, bus, free := f.startHeld(t, "r2")
	mustTakeRuns(t, bus)
	ids := idsApart(t, bus, partitions)
	send := sendVia(t, a)
	requests := f.sendPre(t, ids, send, "r0", "r1", "r2", "r3", "r4")
	for _, id := range ids {
		send(id, "r0")
		sendBatchMsg(t, bus, id, id+"-r1", id+"-r2", id+"-r3")
	}
	waitQueued(t, bus, 2*3)
	for _, id := range ids {
		send(id, "r4")
	}
	waitQueued(t, bus, 2*4)
	openPre()
	given := f.cutA(t, bus, ids, "r2", free)
	f.checkStored(requests)
	f.checkRequests(t, ids, given, requests)
	for _, r := range []string{"r3", "r4"} {
		// Its chain may have started at a before the cut (a run's
		// commands start one after another's start), but it was appended
		// at b.
		f.checkOnce(t, ids[given]+"-"+r, "b", false, "after the cut at a")
		f.checkOnce(t, ids[1-given]+"-"+r, "a", true, "of the run a kept")
	}
}
