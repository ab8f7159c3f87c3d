package nats

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// gatedProbe is an orderProbe whose processing of the commands with a
// gated request ID starts (started is closed) and waits until their gate
// is closed or the command's context ends.
type gatedProbe struct {
	orderProbe
	gates   map[string]chan struct{} // by request ID; set before the bus starts
	started map[string]chan struct{} // by request ID, as gates
}

func newGatedProbe(requestIDs ...string) *gatedProbe {
	p := &gatedProbe{gates: map[string]chan struct{}{}, started: map[string]chan struct{}{}}
	for _, id := range requestIDs {
		p.gates[id], p.started[id] = make(chan struct{}), make(chan struct{})
	}
	return p
}

func (p *gatedProbe) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	if g := p.gates[cmd.RequestID]; g != nil {
		close(p.started[cmd.RequestID])
		select {
		case <-g:
		case <-ctx.Done():
		}
	}
	return p.orderProbe.Process(ctx, cmd)
}

// await waits until the probe began processing the command of requestID.
func (p *gatedProbe) await(t *testing.T, requestID string) {
	t.Helper()
	select {
	case <-p.started[requestID]:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s was not processed", requestID)
	}
}

// pullGate holds the messages the bus's consumers pull once armed: the
// first and the third until their gates are closed, the others not. Each
// pull once armed is reported on pulled.
type pullGate struct {
	armed  atomic.Bool
	calls  atomic.Int32
	pulled chan int32
	first  chan struct{}
	third  chan struct{}
}

func newPullGate() *pullGate {
	return &pullGate{pulled: make(chan int32, 8), first: make(chan struct{}), third: make(chan struct{})}
}

func (g *pullGate) hook(ctx context.Context) bool {
	if !g.armed.Load() {
		return true
	}
	k := g.calls.Add(1)
	g.pulled <- k
	var gate chan struct{}
	switch k {
	case 1:
		gate = g.first
	case 3:
		gate = g.third
	default:
		return true
	}
	select {
	case <-gate:
		return true
	case <-ctx.Done():
		return false // the consumer stopped: its buffer is dropped
	}
}

// await waits for the k-th pull once armed.
func (g *pullGate) await(t *testing.T, k int32) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case got := <-g.pulled:
			if got == k {
				return
			}
		case <-deadline:
			t.Fatalf("pull %d once armed did not come", k)
		}
	}
}

// A command accepted here before Shutdown and handed over to the stream
// during the drain (LocalFirst: its partition is still this instance's,
// but a command of it handed over earlier is not yet processed, so it goes
// behind that one, see enter) is stored after the stream's last sequence
// the drain read; it is still this instance's to process, so the drain
// waits for it, also while its delivery sits in the client's buffer, and
// it is processed before Shutdown returns.
func TestShutdownWaitsForACommandHandedOverDuringTheDrain(t *testing.T) {
	for _, c := range drainCases() {
		if c.local != LocalFirst {
			continue // only LocalFirst hands commands over
		}
		t.Run(c.name, func(t *testing.T) { shutdownWithACommandHandedOver(t, c) })
	}
}

func shutdownWithACommandHandedOver(t *testing.T, c drainCase) {
	pulls := newPullGate()
	draining := make(chan struct{})
	var unquiet atomic.Int64
	probe := newGatedProbe("r0", "c")
	// One lane: the command stored by another instance (c, of another
	// aggregate) holds the lane in front of r2.
	b, n, w := drainBusWith(t, c, BusConfig{Lanes: 1}, &busHooks{
		pulled:   pulls.hook,
		draining: func() { close(draining) },
		unquiet:  func() { unquiet.Add(1) },
	}, probe)
	ctx := context.Background()
	send := func(requestID string) factum.Command {
		t.Helper()
		cmd := tallyCommand("t-1", requestID)
		if err := b.Send(ctx, &cmd); err != nil {
			t.Fatalf("send %s: %v", requestID, err)
		}
		return cmd
	}

	// r0 runs and is held; r1 waits behind it, stored nowhere. The claim
	// lapses and comes back under a new token (as Partitions.resume does)
	// before r0 ends: r1, admitted under the old claim, is handed over.
	r0 := send("r0")
	probe.await(t, "r0")
	r1 := send("r1")
	b.onRelease(0)
	parts := n.parts
	parts.mu.Lock()
	l := parts.held[0]
	l.token += 1000
	token := l.token
	parts.mu.Unlock()
	b.onAcquire(0, token)
	waitFor(t, 30*time.Second, "the new claim to catch up", func() bool { return b.claimOf(0) == token && settledBus(b) })
	pulls.armed.Store(true)
	close(probe.gates["r0"])
	pulls.await(t, 1) // r1, handed over, delivered and held in the client's buffer

	// c, stored by another instance, runs and is held; r2, accepted here,
	// waits behind it in the lane. r1 is not processed yet: r2 goes to the
	// stream behind it once it leaves the lane.
	other := storeCommand(t, n, w, "c")
	probe.await(t, "c")
	r2 := send("r2")
	waitFor(t, 10*time.Second, "r2 to be in the lane", func() bool { return b.busy.Load() == 2 })

	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.Shutdown(sctx) }()
	select {
	case <-draining:
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) before its drain began", err)
	}
	close(probe.gates["c"])
	st := &b.state[0]
	waitFor(t, 30*time.Second, "r2 to be handed over", func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return len(st.handed) == 2 && b.busy.Load() == 0
	})
	close(pulls.first)
	pulls.await(t, 3) // r2, delivered and held in the client's buffer
	waitFor(t, 30*time.Second, "r1 to be processed and acknowledged", func() bool {
		if !slices.Contains(probe.processed(), r1.ID) || !b.Idle() {
			return false
		}
		b.mu.Lock()
		pc := b.consumers[0]
		b.mu.Unlock()
		if pc == nil {
			return true // the drain ended: checked below
		}
		pc.mu.Lock()
		handed := pc.handed
		pc.mu.Unlock()
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		info, err := handed.Info(ictx)
		return err == nil && info.NumPending == 0 && info.NumAckPending == 1
	})
	// Two passes of the drain that began after the server counted r1
	// acknowledged: it waits for r2.
	from := unquiet.Load()
	for unquiet.Load() < from+2 {
		select {
		case err := <-done:
			t.Fatalf("Shutdown returned (%v) while r2, accepted before it and handed over during its drain, waited in the client's buffer; processed %v", err, probe.processed())
		case <-time.After(5 * time.Millisecond):
		}
	}
	close(pulls.third)
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	got := probe.processed()
	want := []string{r0.ID, other.ID, r1.ID, r2.ID}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("processed %v by the end of Shutdown, want %v (r0, c, r1, r2)", got, want)
	}
}
