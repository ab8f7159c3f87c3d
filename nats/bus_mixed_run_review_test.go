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

// storeOne stores, through bus's connection, a message of one command of
// the aggregate id with the request ID req, as another instance's send
// does, on the aggregate's command subject.
func storeOne(t *testing.T, bus *Bus, id, req string) {
	t.Helper()
	cmd := tallyCommand(id, req)
	cmd.AllowCreate = true
	cmd.AggregateID.Tenant = factum.DefaultTenant
	msg, err := encodeCommand(bus.cfg.SubjectPrefix, &cmd, PartitionOf(id, len(bus.state)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bus.put(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
}

// Delivered commands, each its own message, queued behind one another run
// together; when the claim is cut mid-run (the partition given up) with
// LocalNever or LocalDurable, where nothing is handed over, the messages
// up to the last command that succeeded have final outcomes and are
// acknowledged, as each was when it ran alone: here r1, refused at a
// before r2 was appended, is not decided again by the next owner, which
// would append it behind r2. Each aggregate so stores pre, r0, r2, r3,
// r4, in order, whether its partition was given up or kept.
func TestCutRunOfDeliveredCommandsKeepsTheOutcomesBeforeTheLastSuccess(t *testing.T) {
	for _, c := range []struct {
		name  string
		local LocalMode
	}{{"LocalNever", LocalNever}, {"LocalDurable", LocalDurable}} {
		t.Run(c.name, func(t *testing.T) {
			const partitions = 2
			f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), c.local)
			pre := make(chan struct{})
			openPre := sync.OnceFunc(func() { close(pre) })
			t.Cleanup(openPre)
			f.probe.hold = func(instance string, cmd *factum.Command) {
				if cmd.RequestID == cmd.AggregateID.ID+"-pre" {
					<-pre
				}
			}
			f.probe.block = func(_ context.Context, instance string, cmd *factum.Command) error {
				if instance == "a" && cmd.RequestID == cmd.AggregateID.ID+"-r1" {
					return factum.IllegalArgument("r1 is refused at a")
				}
				return nil
			}
			a, free := f.startHolding("a", func(cmd *factum.Command) bool { return cmd.RequestID == cmd.AggregateID.ID+"-r3" }, true)
			waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settled(t, a) })
			bus := a.Bus().(*Bus)
			if bus.runs == nil {
				t.Fatal("the executor takes no runs: the test would check nothing")
			}
			ids := idsApart(t, bus, partitions)
			want := map[string][]string{}
			for _, id := range ids {
				for _, r := range []string{"pre", "r0", "r1", "r2", "r3", "r4"} {
					storeOne(t, bus, id, id+"-"+r)
					if r != "r1" {
						want[id] = append(want[id], id+"-"+r)
					}
				}
			}
			waitFor(t, 10*time.Second, "pre in process and the rest queued", func() bool { return bus.busy.Load() == 2*6 })
			openPre()
			f.waitHeld(t, ids, "r3", "a")
			f.start("b")
			given := givenUp(t, bus, partitions)
			free()
			f.waitQuiet(t)
			for n, id := range ids {
				if got := f.requestsOf(t, id); fmt.Sprint(got) != fmt.Sprint(want[id]) {
					t.Errorf("aggregate %s (given up: %v): stored %v, want %v", id, n == given, got, want[id])
				}
			}
			f.probe.mu.Lock()
			defer f.probe.mu.Unlock()
			if f.probe.overlaps == 0 {
				t.Error("no command started while another of its aggregate was under way: no run formed")
			}
			for _, id := range ids {
				if by := f.probe.by[id+"-r1"]; len(by) != 1 || by["a"] != 1 {
					t.Errorf("%s processed %v, want once, at a (its refusal stands)", id+"-r1", by)
				}
			}
		})
	}
}

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
	return factum.Signal{CommandID: c.ID, RequestID: c.RequestIDOrID(), Stage: factum.StageProcessed, AggregateID: c.AggregateID}
}

func (e *abortRunExec) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	return e.step(ctx, cmd)
}

func (e *abortRunExec) ProcessRun(ctx context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	for i, c := range cmds {
		if s, skipped := skip(c); skipped {
			emit(i, s)
			continue
		}
		emit(i, e.step(ctx, c))
	}
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
	return factum.Signal{CommandID: c.ID, RequestID: c.RequestIDOrID(), Stage: factum.StageProcessed, AggregateID: c.AggregateID}
}

func (e *heldRunExec) Process(_ context.Context, cmd *factum.Command) factum.Signal {
	e.mu.Lock()
	e.alone = append(e.alone, cmd.RequestID)
	e.mu.Unlock()
	return e.step(cmd)
}

func (e *heldRunExec) ProcessRun(_ context.Context, cmds []*factum.Command, skip func(*factum.Command) (factum.Signal, bool), emit func(int, factum.Signal)) {
	e.mu.Lock()
	e.runs = append(e.runs, len(cmds))
	e.mu.Unlock()
	for i, c := range cmds {
		if s, skipped := skip(c); skipped {
			emit(i, s)
			continue
		}
		emit(i, e.step(c))
	}
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

// A run cut off with LocalFirst hands over a delivered command after the
// cut ahead of a command accepted here behind it: r0 accepted here, the
// batch r1, r2, r3 cut while r2 is under way, r4 delivered and r5
// accepted here. Each aggregate so stores pre and r0 to r5, in order,
// whether its partition was given up or kept.
func TestMixedRunCutHandsADeliveredCommandOverInOrder(t *testing.T) {
	const partitions = 2
	f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), LocalFirst)
	pre := make(chan struct{})
	openPre := sync.OnceFunc(func() { close(pre) })
	t.Cleanup(openPre)
	f.probe.hold = func(instance string, cmd *factum.Command) {
		if cmd.RequestID == cmd.AggregateID.ID+"-pre" {
			<-pre
		}
	}
	a, free := f.startHolding("a", func(cmd *factum.Command) bool { return cmd.RequestID == cmd.AggregateID.ID+"-r2" }, true)
	waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settled(t, a) })
	bus := a.Bus().(*Bus)
	if bus.runs == nil {
		t.Fatal("the executor takes no runs: the test would check nothing")
	}
	ids := idsApart(t, bus, partitions)
	send := func(id, r string) {
		t.Helper()
		if _, err := a.Gateway().Send(context.Background(), tallyCommand(id, id+"-"+r)); err != nil {
			t.Fatal(err)
		}
	}
	queued := func(n int64) {
		t.Helper()
		waitFor(t, 10*time.Second, fmt.Sprintf("%d jobs in the lanes", n), func() bool { return bus.busy.Load() == n })
	}
	requests := map[string][]string{}
	for _, id := range ids {
		for _, r := range []string{"pre", "r0", "r1", "r2", "r3", "r4", "r5"} {
			requests[id] = append(requests[id], id+"-"+r)
		}
		send(id, "pre")
	}
	f.waitHeld(t, ids, "pre", "a")
	for _, id := range ids {
		send(id, "r0")
		sendBatchMsg(t, bus, id, id+"-r1", id+"-r2", id+"-r3")
		storeOne(t, bus, id, id+"-r4")
	}
	queued(2 * 4)
	for _, id := range ids {
		send(id, "r5")
	}
	queued(2 * 5)
	openPre()
	f.waitHeld(t, ids, "r2", "a")
	f.start("b")
	given := givenUp(t, bus, partitions)
	free()
	f.waitQuiet(t)
	f.checkStored(requests)
	for n, id := range ids {
		if got := f.requestsOf(t, id); fmt.Sprint(got) != fmt.Sprint(requests[id]) {
			t.Errorf("aggregate %s (given up: %v): stored %v, want %v", id, n == given, got, requests[id])
		}
	}
	// Every member left its claim, cut or not: a partition's count of
	// commands running outlives its claim, and release waits for it.
	for n := range partitions {
		st := &bus.state[n]
		st.mu.Lock()
		running := st.running
		st.mu.Unlock()
		if running != 0 {
			t.Errorf("partition %d (given up: %v): %d commands counted running at a", n, n == given, running)
		}
	}
}

// A batch straddling two runs keeps the outcomes of the run before the
// cut: behind pre, l1 and the batch b0 to b4 run as l1, b0, b1, b2 (b1
// refused at a) and b3, b4 (MaxRun 4), the second cut while b4 is under
// way. b3 succeeded, so only b4 is handed over: b1's refusal stands, and
// the next owner does not append it behind b3. Each aggregate so stores
// pre, l1, b0, b2, b3, b4, in order, whether its partition was given up
// or kept.
func TestBatchStraddlingACutRunKeepsTheEarlierRunsOutcomes(t *testing.T) {
	const partitions = 2
	f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), LocalFirst)
	pre, b4 := make(chan struct{}), make(chan struct{})
	openPre, free := sync.OnceFunc(func() { close(pre) }), sync.OnceFunc(func() { close(b4) })
	t.Cleanup(openPre)
	t.Cleanup(free)
	f.probe.hold = func(instance string, cmd *factum.Command) {
		if cmd.RequestID == cmd.AggregateID.ID+"-pre" {
			<-pre
		}
	}
	f.probe.before = func(instance string, cmd *factum.Command) {
		if instance == "a" && cmd.RequestID == cmd.AggregateID.ID+"-b4" {
			<-b4
		}
	}
	f.probe.block = func(_ context.Context, instance string, cmd *factum.Command) error {
		if instance == "a" && cmd.RequestID == cmd.AggregateID.ID+"-b1" {
			return factum.IllegalArgument("b1 is refused at a")
		}
		return nil
	}
	a := f.startOn("a", f.w.url, BusConfig{MaxRun: 4})
	f.balanced()
	waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settled(t, a) })
	bus := a.Bus().(*Bus)
	if bus.runs == nil {
		t.Fatal("the executor takes no runs: the test would check nothing")
	}
	ids := idsApart(t, bus, partitions)
	send := func(id, r string) {
		t.Helper()
		if _, err := a.Gateway().Send(context.Background(), tallyCommand(id, id+"-"+r)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{}
	for _, id := range ids {
		for _, r := range []string{"pre", "l1", "b0", "b2", "b3", "b4"} {
			want[id] = append(want[id], id+"-"+r)
		}
		send(id, "pre")
	}
	f.waitHeld(t, ids, "pre", "a")
	for _, id := range ids {
		send(id, "l1")
		sendBatchMsg(t, bus, id, id+"-b0", id+"-b1", id+"-b2", id+"-b3", id+"-b4")
	}
	waitFor(t, 10*time.Second, "pre in process and the rest queued", func() bool { return bus.busy.Load() == 2*3 })
	openPre()
	f.waitHeld(t, ids, "b4", "a")
	f.start("b")
	given := givenUp(t, bus, partitions)
	free()
	f.waitQuiet(t)
	for n, id := range ids {
		if got := f.requestsOf(t, id); fmt.Sprint(got) != fmt.Sprint(want[id]) {
			t.Errorf("aggregate %s (given up: %v): stored %v, want %v", id, n == given, got, want[id])
		}
	}
	f.probe.mu.Lock()
	defer f.probe.mu.Unlock()
	for _, id := range ids {
		if by := f.probe.by[id+"-b1"]; len(by) != 1 || by["a"] != 1 {
			t.Errorf("%s processed %v, want once, at a (its refusal stands)", id+"-b1", by)
		}
	}
}
