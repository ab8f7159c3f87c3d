package nats

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
)

// drainCase is one bus of the drain tests: a local mode on a server.
type drainCase struct {
	name  string
	local LocalMode
	world func(t testing.TB, partitions int, lease time.Duration) *world
}

func drainCases() []drainCase {
	var cases []drainCase
	for _, m := range []struct {
		name  string
		local LocalMode
	}{{"LocalFirst", LocalFirst}, {"LocalNever", LocalNever}, {"LocalDurable", LocalDurable}} {
		cases = append(cases,
			drainCase{m.name + "/in-process", m.local, inProcessWorld},
			drainCase{m.name + "/FACTUM_NATS_URL", m.local, sharedWorld})
	}
	return cases
}

// drainBus starts a bus owning the one partition of a world made for c,
// recording what it processes, with hooks set before Start; the returned
// node's connection is the bus's.
func drainBus(t *testing.T, c drainCase, hooks *busHooks) (*Bus, *node, *world, *orderProbe) {
	t.Helper()
	probe := &orderProbe{}
	b, n, w := drainBusWith(t, c, BusConfig{}, hooks, probe)
	return b, n, w, probe
}

// drainBusWith is drainBus with the bus configured by cfg (its Local set
// from c) and processing with exec.
func drainBusWith(t *testing.T, c drainCase, cfg BusConfig, hooks *busHooks, exec interface {
	command.Executor
	command.Sink
}) (*Bus, *node, *world) {
	t.Helper()
	w := c.world(t, 1, 30*time.Second)
	cfg.Local = c.local
	n := w.node(t, "a", cfg)
	n.waitOwns(t, 1)
	eb, err := n.newBus(exec, exec)
	if err != nil {
		t.Fatal(err)
	}
	b := eb.(*Bus)
	b.hooks = hooks
	b.Start(context.Background())
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	waitFor(t, 30*time.Second, "the claim to catch up", func() bool { return b.claimOf(0) != 0 && settledBus(b) })
	return b, n, w
}

// storeCommand stores a command for partition 0 on the stream, as another
// instance's send does, and returns it.
func storeCommand(t *testing.T, n *node, w *world, requestID string) factum.Command {
	t.Helper()
	cmd := tallyCommand("t-1", requestID)
	msg, err := encodeCommand(w.prefix, &cmd, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// A command stored before Shutdown that the partition's consumer delivered
// and the bus has not taken in yet (still in the client's buffer: in no
// lane and not in flight) is processed before Shutdown returns. The
// server counts it delivered, so nothing is pending on the consumer, but
// it is not acknowledged: the drain must wait for it, also while the
// claim's renewal is late (its lease short of time, not given up).
func TestShutdownProcessesACommandDeliveredButNotYetTakenIn(t *testing.T) {
	for _, c := range drainCases() {
		for _, late := range []bool{false, true} {
			name := c.name
			if late {
				name += "/renewal-late"
			}
			t.Run(name, func(t *testing.T) { shutdownWithACommandHeld(t, c, late) })
		}
	}
}

func shutdownWithACommandHeld(t *testing.T, c drainCase, late bool) {
	held, release := make(chan struct{}), make(chan struct{})
	unquiet := make(chan struct{}, 1)
	var holding sync.Once
	b, n, w, probe := drainBus(t, c, &busHooks{
		pulled: func(ctx context.Context) bool {
			holding.Do(func() { close(held) })
			select {
			case <-release:
				return true
			case <-ctx.Done():
				return false // the consumer stopped: its buffer is dropped
			}
		},
		unquiet: func() {
			select {
			case unquiet <- struct{}{}:
			default:
			}
		},
	})
	cmd := storeCommand(t, n, w, "before-shutdown")
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the command was not delivered")
	}
	if late {
		// The lease's validity runs out without a release; the renewal
		// lands once the drain looked (the lease, 30 s, is renewed every
		// 7.5 s: not in between).
		parts := n.parts
		parts.mu.Lock()
		l := parts.held[0]
		valid := l.validUntil
		l.validUntil = time.Now().Add(-time.Millisecond)
		parts.mu.Unlock()
		defer func() {
			parts.mu.Lock()
			l.validUntil = valid
			parts.mu.Unlock()
		}()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.Shutdown(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) while a command stored before it was delivered and not taken in; processed %v", err, probe.processed())
	case <-unquiet:
	}
	if late {
		n.parts.mu.Lock()
		n.parts.held[0].validUntil = time.Now().Add(30 * time.Second)
		n.parts.mu.Unlock()
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got := probe.processed(); fmt.Sprint(got) != fmt.Sprint([]string{cmd.ID}) {
		t.Fatalf("processed %v by the end of Shutdown, want only the command stored before it (%s)", got, cmd.ID)
	}
}

// A command stored after the drain began (another instance still sending)
// does not hold it, even while delivered and unacknowledged here: it stays
// on the stream for the partition's next owner.
func TestShutdownDoesNotWaitForACommandStoredAfterTheDrainBegan(t *testing.T) {
	for _, before := range []bool{true, false} {
		for _, c := range drainCases() {
			name := c.name + "/a-command-before"
			if !before {
				name = c.name + "/an-empty-stream" // nothing stored: the drain waits for nothing
			}
			t.Run(name, func(t *testing.T) { testShutdownIgnoresLaterCommands(t, c, before) })
		}
	}
}

// testShutdownIgnoresLaterCommands stores a command while the drain runs
// and holds it unacknowledged; Shutdown must return without it, having
// processed only the command stored before it (when before).
func testShutdownIgnoresLaterCommands(t *testing.T, c drainCase, before bool) {
	t.Helper()
	var (
		holdLater sync.Once
		holding   atomic.Bool // from the drain on
		hold      = make(chan struct{})
		draining  = make(chan struct{})
		n         *node
		w         *world
	)
	b, n, w, probe := drainBus(t, c, &busHooks{
		pulled: func(ctx context.Context) bool {
			if !holding.Load() {
				return true
			}
			holdLater.Do(func() { close(hold) })
			<-ctx.Done() // held until the consumer stops
			return false
		},
		draining: func() {
			close(draining)
			holding.Store(true)
			storeCommand(t, n, w, "after-the-drain-began")
			<-hold
		},
	})
	var want []string
	if before {
		first := storeCommand(t, n, w, "before-shutdown")
		want = append(want, first.ID)
		waitFor(t, 30*time.Second, "the first command to be processed", func() bool { return len(probe.processed()) == 1 && b.Idle() })
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case <-draining:
	default:
		t.Fatal("the drain did not begin")
	}
	if got := probe.processed(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("processed %v, want only the command stored before the drain %v", got, want)
	}
}
