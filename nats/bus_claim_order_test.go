package nats

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/engine"
)

// orderProbe is an executor that records the command IDs it processes, in
// order, and a sink that drops the signals.
type orderProbe struct {
	mu  sync.Mutex
	ids []string
}

func (p *orderProbe) Process(_ context.Context, cmd *factum.Command) factum.Signal {
	p.mu.Lock()
	p.ids = append(p.ids, cmd.ID)
	p.mu.Unlock()
	return factum.Signal{CommandID: cmd.ID, RequestID: cmd.RequestIDOrID(), Stage: factum.StageProcessed, AggregateID: cmd.AggregateID}
}

func (p *orderProbe) Signal(factum.Signal) {}

func (p *orderProbe) processed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.ids...)
}

// A command stored on the stream before this instance claimed its
// partition (sent to an owner that died before processing it) is
// processed before a command of the same aggregate sent here after the
// claim (LocalFirst): the local path does not overtake the partition's
// backlog.
func TestALocalCommandDoesNotOvertakeTheBacklogOfAClaim(t *testing.T) {
	for _, mode := range []LocalMode{LocalFirst, LocalDurable} {
		w := inProcessWorld(t, 1, time.Second)
		n := w.node(t, "a", BusConfig{Local: mode})
		stored := tallyCommand("t-1", "stored-first")
		msg, err := encodeCommand(w.prefix, &stored, 0)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := n.js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
		probe := &orderProbe{}
		eb, err := n.newBus(probe, probe)
		if err != nil {
			t.Fatal(err)
		}
		b := eb.(*Bus)
		b.Start(ctx)
		t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
		waitFor(t, 30*time.Second, "the claim", func() bool { return b.claimOf(0) != 0 })
		later := tallyCommand("t-1", "sent-after-the-claim")
		if err := b.Send(ctx, &later); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "both commands", func() bool { return len(probe.processed()) == 2 })
		if got := probe.processed(); got[0] != stored.ID || got[1] != later.ID {
			t.Fatalf("mode %d: processed %v, want the stored %s before the later %s", mode, got, stored.ID, later.ID)
		}
	}
}

// settled reports whether the bus of e has caught up with the backlog of
// every partition it holds: from then on its owner's commands take the
// local path.
func settled(t testing.TB, e interface{ Bus() engine.Bus }) bool {
	t.Helper()
	b, ok := e.Bus().(*Bus)
	if !ok {
		t.Fatalf("the engine's bus is a %T", e.Bus())
	}
	return settledBus(b)
}

// settledBus is settled for a bus.
func settledBus(b *Bus) bool {
	for n := range b.state {
		st := &b.state[n]
		st.mu.Lock()
		busy := st.token != 0 && st.catchingUp
		st.mu.Unlock()
		if busy {
			return false
		}
	}
	return true
}

// An acquire again under the claim a consumer already serves (Start's
// look at the partitions held, after the subscription delivered them)
// makes no consumer, so it does not start a catching up that nothing
// would end: the owner's commands keep the local path.
func TestAcquireAgainUnderTheSameClaimKeepsTheLocalPath(t *testing.T) {
	w := inProcessWorld(t, 1, time.Second)
	n := w.node(t, "a", BusConfig{})
	probe := &orderProbe{}
	eb, err := n.newBus(probe, probe)
	if err != nil {
		t.Fatal(err)
	}
	b := eb.(*Bus)
	b.Start(context.Background())
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	waitFor(t, 30*time.Second, "the claim to catch up", func() bool { return b.claimOf(0) != 0 && settledBus(b) })
	b.onAcquire(0, b.claimOf(0))
	if !settledBus(b) {
		t.Fatal("an acquire under the claim in force started a catching up")
	}
}

// Once the bus stopped acting on a partition, a command for it no longer
// takes the local path, even while the lease is still this instance's: it
// is stored on the stream for the partition's next owner. The senders'
// view of the claim must not outlive the release.
func TestASendAfterTheReleaseGoesToTheStream(t *testing.T) {
	w := inProcessWorld(t, 1, 5*time.Second)
	n := w.node(t, "a", BusConfig{})
	probe := &orderProbe{}
	eb, err := n.newBus(probe, probe)
	if err != nil {
		t.Fatal(err)
	}
	b := eb.(*Bus)
	ctx := context.Background()
	b.Start(ctx)
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	waitFor(t, 30*time.Second, "the claim to catch up", func() bool { return b.claimOf(0) != 0 && settledBus(b) })
	b.onRelease(0) // as the lease goroutine does when it gives the partition up
	cmd := tallyCommand("t-1", "after-the-release")
	if err := b.Send(ctx, &cmd); err != nil {
		t.Fatal(err)
	}
	s, err := n.js.Stream(ctx, w.stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("the stream holds %d commands after the send, want 1: the command took the local path of a partition given up", info.State.Msgs)
	}
	if got := probe.processed(); len(got) != 0 {
		t.Fatalf("processed %v here after the release", got)
	}
}
