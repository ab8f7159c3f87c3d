package nats

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A command of an aggregate stored on the stream while the owner holds an
// older local one of it (LocalFirst: accepted here, stored nowhere) is
// delivered behind it in the lane; when the claim ends before either ran,
// the older one must still be processed first by the next owner, although
// it reaches the stream only when it is handed over: the lane hands both
// over, in its order, to the handed subject, which the next owner delivers
// first, so r1 is not stored behind r2, which the stream held already.
func TestAHandedOverCommandIsNotOvertakenByALaterStoredOne(t *testing.T) {
	const partitions = 2
	f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), LocalFirst)
	id := idInPartition(t, 0, partitions)
	a, free := f.startHolding("a", request(id+"-r0"), false)
	waitFor(t, 30*time.Second, "the claims to catch up", func() bool { return settled(t, a) })
	bus := a.Bus().(*Bus)
	ctx := context.Background()

	// r0 runs and is held; r1 is queued behind it, stored nowhere.
	for _, req := range []string{id + "-r0", id + "-r1"} {
		if _, err := a.Gateway().Send(ctx, tallyCommand(id, req)); err != nil {
			t.Fatal(err)
		}
	}
	// r2 is sent after r1's SENT through the stream, as another instance,
	// which does not own the partition, sends it.
	later := tallyCommand(id, id+"-r2")
	msg, err := encodeCommand(f.w.prefix, &later, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.nodes["a"].js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the commands to be in the lane", func() bool { return bus.busy.Load() == 3 })

	go bus.onRelease(0) // as the lease goroutine does when it gives the partition up
	waitFor(t, 10*time.Second, "the release", func() bool { return bus.claimOf(0) == 0 })
	free()
	waitFor(t, 10*time.Second, "the lane to pass the queued commands", func() bool { return bus.busy.Load() == 0 })
	token, ok := f.nodes["a"].parts.Owns(0)
	if !ok {
		t.Fatal("the partitions gave the partition up")
	}
	bus.onAcquire(0, token) // taken again: a new consumer delivers what the stream holds
	waitFor(t, 60*time.Second, "the instance to be idle and the stream empty", func() bool {
		return bus.Idle() && stored(t, f) == 0
	})

	got := f.requestsOf(t, id)
	if want := []string{id + "-r0", id + "-r1", id + "-r2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored %v, want %v", got, want)
	}
	f.probe.check(t)
}
