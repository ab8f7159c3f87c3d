package nats

import (
	"context"
	"fmt"
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
