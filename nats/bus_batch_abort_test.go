package nats

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// holdExec holds the command of request "hold" until its context ends
// and succeeds at once with any other; it drops the signals.
type holdExec struct{ started chan struct{} }

func (e holdExec) Process(ctx context.Context, cmd *factum.Command) factum.Signal {
	if cmd.RequestID == "hold" {
		close(e.started)
		<-ctx.Done()
	}
	return factum.Signal{CommandID: cmd.ID, RequestID: cmd.RequestIDOrID(), Stage: factum.StageProcessed, AggregateID: cmd.AggregateID}
}

func (holdExec) Signal(factum.Signal) {}

// A Shutdown cut short counts the commands its lanes dropped: a delivered
// batch of three queued behind a command in process counts three, as
// three delivered commands would.
func TestShutdownCutShortCountsTheCommandsOfADroppedBatch(t *testing.T) {
	exec := holdExec{started: make(chan struct{})}
	bus, n, w := drainBusWith(t, drainCase{"LocalNever/in-process", LocalNever, inProcessWorld}, BusConfig{}, nil, exec)
	storeCommand(t, n, w, "hold")
	select {
	case <-exec.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the held command did not start")
	}
	sendBatchMsg(t, bus, "t-1", "b0", "b1", "b2")
	waitFor(t, 10*time.Second, "the batch to be queued behind the held command", func() bool { return bus.busy.Load() == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := bus.Shutdown(ctx)
	if err == nil || !strings.Contains(err.Error(), "shutdown deadline passed") {
		t.Fatalf("Shutdown: %v, want the deadline passed", err)
	}
	if got := bus.dropped.Load(); got != 3 {
		t.Errorf("%d commands counted dropped (%v), want the batch's 3", got, err)
	}
}
