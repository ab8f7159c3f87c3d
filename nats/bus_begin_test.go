package nats

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
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
	release := make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	f.probe.hold = func(instance string, cmd *factum.Command) {
		if instance == "a" && cmd.RequestID == id+"-r0" {
			<-release
		}
	}
	a := f.start("a")
	t.Cleanup(free)
	f.balanced()
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
	aid := factum.AggregateID{NamedAggregate: factum.NamedAggregate{Context: "shop", Aggregate: "tally"}, ID: id, Tenant: factum.DefaultTenant}
	var got []string
	waitFor(t, 30*time.Second, "r2 to be stored", func() bool {
		streams, err := f.store.Load(ctx, aid, 1, eventstore.MaxVersion)
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, s := range streams {
			got = append(got, s.RequestID)
		}
		return len(got) > 0 && got[len(got)-1] == id+"-r2"
	})
	if want := []string{id + "-r0", id + "-r1", id + "-r2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored %v, want %v", got, want)
	}
	f.probe.check(t)
}
