package nats

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// orderExec records the request IDs it processes, in order, and succeeds;
// it is its own signal sink, dropping the signals.
type orderExec struct {
	mu   sync.Mutex
	reqs []string
}

func (e *orderExec) Process(_ context.Context, cmd *factum.Command) factum.Signal {
	e.mu.Lock()
	e.reqs = append(e.reqs, cmd.RequestID)
	e.mu.Unlock()
	return factum.Signal{CommandID: cmd.ID, RequestID: cmd.RequestIDOrID(), Stage: factum.StageProcessed, AggregateID: cmd.AggregateID}
}

func (e *orderExec) Signal(factum.Signal) {}

func (e *orderExec) processed() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.reqs...)
}

// A crossing send that waits in its aggregate's outbox behind a publish
// in flight (r1 behind r0) decided to cross before it waited: if this
// instance takes the partition over and its claim catches up meanwhile,
// r1 is stored after the catching up, and the sender's next command (r2),
// sent once r1's Send returned, is queued here (LocalFirst) and runs
// before the consumer delivers r1. The sender's order must hold: r1 is
// processed before r2.
func TestCommandStoredAfterTheCatchUpIsNotOvertakenByTheSendersNext(t *testing.T) {
	w := inProcessWorld(t, 4, 3*time.Second)
	nb := w.node(t, "b", BusConfig{})
	nb.waitOwns(t, 4)
	na := w.node(t, "a", BusConfig{})
	waitFor(t, 30*time.Second, "fair shares", func() bool {
		return len(na.parts.Owned()) == 2 && len(nb.parts.Owned()) == 2
	})
	exec := &orderExec{}
	eb, err := na.newBus(exec, exec)
	if err != nil {
		t.Fatal(err)
	}
	bus := eb.(*Bus)
	gate := make(chan struct{})
	openGate := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(openGate)
	var holdNext, blockPulls atomic.Bool
	pulls := make(chan struct{})
	openPulls := sync.OnceFunc(func() { close(pulls) })
	t.Cleanup(openPulls)
	bus.hooks = &busHooks{
		coalescing: func(int) {
			if holdNext.CompareAndSwap(true, false) {
				<-gate
			}
		},
		pulled: func(ctx context.Context) bool {
			if blockPulls.Load() {
				select {
				case <-pulls:
				case <-ctx.Done():
				}
			}
			return true
		},
	}
	bus.Start(context.Background())
	t.Cleanup(func() {
		openGate()
		openPulls()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = bus.Shutdown(ctx)
	})
	var id factum.AggregateID
	for i := range 1000 {
		if _, ok := nb.parts.OwnsAggregate(fmt.Sprintf("t-%d", i)); ok {
			id = tallyID(fmt.Sprintf("t-%d", i))
			break
		}
	}
	n := PartitionOf(id.ID, 4)
	cmd := func(req string) *factum.Command {
		c := factum.NewCommand(id, addN{N: 1})
		c.RequestID = req
		return &c
	}
	send := func(c *factum.Command) <-chan error {
		errc := make(chan error, 1)
		go func() { errc <- bus.Send(context.Background(), c) }()
		return errc
	}
	waiting := func() int {
		bus.out.mu.Lock()
		defer bus.out.mu.Unlock()
		if box := bus.out.m[outKeyOf(cmd(""))]; box != nil {
			return len(box.waiting)
		}
		return 0
	}

	// Another caller's r0 is on its way (held), the sender's r1 waits
	// behind it.
	holdNext.Store(true)
	r0 := send(cmd("r0"))
	waitFor(t, 10*time.Second, "r0 to be on its way", func() bool {
		bus.out.mu.Lock()
		defer bus.out.mu.Unlock()
		return len(bus.out.m) == 1
	})
	r1 := send(cmd("r1"))
	waitFor(t, 10*time.Second, "r1 to wait in the outbox", func() bool { return waiting() == 1 })

	// a takes the partition over and its consumer looks at the stream,
	// which holds nothing of the partition: the claim would catch up,
	// but for r1, which decided to cross and is not stored yet (the
	// claim waits for it); then its consumer's deliveries are slow.
	if err := nb.parts.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "a to own the partition", func() bool {
		token, _ := bus.state[n].claimed()
		return token != 0
	})
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		if _, catchingUp := bus.state[n].claimed(); !catchingUp {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	blockPulls.Store(true)

	openGate()
	for i, errc := range []<-chan error{r0, r1} {
		select {
		case err := <-errc:
			if err != nil {
				t.Fatalf("r%d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("r%d: Send did not return", i)
		}
	}
	// r1's Send returned: the sender sends its next command.
	if err := bus.Send(context.Background(), cmd("r2")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	openPulls()
	waitFor(t, 10*time.Second, "r0, r1, r2 to be processed", func() bool { return len(exec.processed()) == 3 })
	at := map[string]int{}
	for i, r := range exec.processed() {
		at[r] = i
	}
	if at["r1"] > at["r2"] {
		t.Errorf("processed %v: r2, sent after r1's Send returned, ran before r1", exec.processed())
	}
}
