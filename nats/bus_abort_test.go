package nats

import (
	"context"
	"testing"
	"time"
)

// A delivered command cut off by a shutdown past its deadline (its context
// cancelled before its append) was not processed: it is not acknowledged,
// and stays on the stream for the partition's next owner.
func TestADeliveredCommandCutOffByAnAbortedShutdownStaysOnTheStream(t *testing.T) {
	const partitions = 2
	f := newFleet(t, sharedWorld(t, partitions, 3*time.Second), LocalNever)
	f.store.Store = cancelAwareStore{Store: f.store.Store}
	id := idInPartition(t, 0, partitions)
	a, free := f.startHolding("a", request(id+"-r0"), true)
	bus := a.Bus().(*Bus)
	f.mu.Lock()
	f.crashed["a"] = true // shut down here; the cleanup only closes what is left
	f.mu.Unlock()
	if _, err := a.Gateway().Send(context.Background(), tallyCommand(id, id+"-r0")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the command to run", func() bool { return f.probe.started.Load() == 1 })

	go func() {
		for !bus.aborted.Load() {
			time.Sleep(time.Millisecond)
		}
		free() // the command goes on with its context cancelled
	}()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := bus.Shutdown(ctx); err == nil {
		t.Fatal("the shutdown passed its deadline without an error")
	}
	if got := stored(t, f); got != 1 {
		t.Fatalf("%d commands on the stream after the shutdown, want the one cut off", got)
	}
}
