package nats

import (
	"context"
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
			openPre := f.holdPre(t)
			f.refuseAt("a", "r1")
			_, bus, free := f.startHeld(t, "r3")
			mustTakeRuns(t, bus)
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
			waitQueued(t, bus, 2*6) // pre in process and the rest queued
			openPre()
			given := f.cutA(t, bus, ids, "r3", free)
			f.checkRequests(t, ids, given, want)
			f.checkRunFormed(t)
			for _, id := range ids {
				f.checkOnce(t, id+"-r1", "a", true, "its refusal standing")
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
	openPre := f.holdPre(t)
	a, bus, free := f.startHeld(t, "r2")
	mustTakeRuns(t, bus)
	ids := idsApart(t, bus, partitions)
	send := sendVia(t, a)
	requests := f.sendPre(t, ids, send, "r0", "r1", "r2", "r3", "r4", "r5")
	for _, id := range ids {
		send(id, "r0")
		sendBatchMsg(t, bus, id, id+"-r1", id+"-r2", id+"-r3")
		storeOne(t, bus, id, id+"-r4")
	}
	waitQueued(t, bus, 2*4)
	for _, id := range ids {
		send(id, "r5")
	}
	waitQueued(t, bus, 2*5)
	openPre()
	given := f.cutA(t, bus, ids, "r2", free)
	f.checkStored(requests)
	f.checkRequests(t, ids, given, requests)
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
	openPre := f.holdPre(t)
	b4 := make(chan struct{})
	free := sync.OnceFunc(func() { close(b4) })
	t.Cleanup(free)
	f.probe.before = func(instance string, cmd *factum.Command) {
		if instance == "a" && cmd.RequestID == cmd.AggregateID.ID+"-b4" {
			<-b4
		}
	}
	f.refuseAt("a", "b1")
	a := f.startOn("a", f.w.url, BusConfig{MaxRun: 4})
	f.balanced()
	waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settled(t, a) })
	bus := a.Bus().(*Bus)
	mustTakeRuns(t, bus)
	ids := idsApart(t, bus, partitions)
	send := sendVia(t, a)
	want := f.sendPre(t, ids, send, "l1", "b0", "b2", "b3", "b4")
	for _, id := range ids {
		send(id, "l1")
		sendBatchMsg(t, bus, id, id+"-b0", id+"-b1", id+"-b2", id+"-b3", id+"-b4")
	}
	waitQueued(t, bus, 2*3) // pre in process and the rest queued
	openPre()
	given := f.cutA(t, bus, ids, "b4", free)
	f.checkRequests(t, ids, given, want)
	for _, id := range ids {
		f.checkOnce(t, id+"-b1", "a", true, "its refusal standing")
	}
}
