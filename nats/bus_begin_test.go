package nats

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A command whose lane passed the claim's check while the lease was valid
// but whose Begin comes after its validity ran out (the lane stalled past
// the guard), while the renewal is late but lands, is processed under the
// claim once the renewal landed: the claim goes on with the same token and
// consumer, so a command set aside unacknowledged would be delivered again
// only after AckWait, behind the later commands of its aggregate.
func TestACommandRefusedByALateRenewalRunsOnceTheClaimIsRenewed(t *testing.T) {
	const partitions = 2
	f := newFleet(t, sharedWorld(t, partitions, 30*time.Second), LocalNever)
	id := idInPartition(t, 0, partitions)
	a, free := f.startHolding("a", request(id+"-r0"), false)
	bus := a.Bus().(*Bus)
	parts := f.nodes["a"].parts
	ctx := context.Background()
	for _, req := range []string{id + "-r0", id + "-r1"} {
		if _, err := a.Gateway().Send(ctx, tallyCommand(id, req)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the commands to be in the lane", func() bool { return bus.busy.Load() == 2 })

	// The validity runs out with r0 begun; r0 ends before the lease's
	// timer notices, and r1's lane still sees the lease end it read.
	parts.mu.Lock()
	l := parts.held[0]
	valid := l.validUntil
	l.validUntil = time.Now().Add(-time.Millisecond)
	parts.mu.Unlock()
	done := bus.Done()
	free()
	st := &bus.state[0]
	waitFor(t, 10*time.Second, "r1 to be entered", func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return bus.Done() >= done+1 && st.running == 1 || bus.Done() >= done+2
	})
	time.Sleep(50 * time.Millisecond) // r1's Begin, refused, happens meanwhile
	// The late renewal lands: the same claim goes on.
	parts.mu.Lock()
	l.validUntil = valid
	parts.mu.Unlock()

	if _, err := a.Gateway().Send(ctx, tallyCommand(id, id+"-r2")); err != nil {
		t.Fatal(err)
	}
	var got []string
	waitFor(t, 30*time.Second, "r2 to be stored", func() bool {
		got = f.requestsOf(t, id)
		return len(got) > 0 && got[len(got)-1] == id+"-r2"
	})
	if want := []string{id + "-r0", id + "-r1", id + "-r2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored %v, want %v", got, want)
	}
	f.probe.check(t)
}
