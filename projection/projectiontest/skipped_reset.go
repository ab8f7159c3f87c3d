package projectiontest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/projection"
)

// runUntilCalls runs r until the projection's function has been called n
// times, then a while longer (so that it reads on past the streams it
// does not consume, leaving them unsaved), and stops it.
func runUntilCalls(t *testing.T, r *projection.Runner, c *counts, n int) {
	t.Helper()
	runUntil(r, func() bool { return c.callCount() >= n }, 100*time.Millisecond)
	if c.callCount() < n {
		t.Fatalf("the function was called %d times in a minute, want %d", c.callCount(), n)
	}
}

// consumedCount is how many streams of all the kit's projection from
// carts consumes.
func consumedCount(all []factum.EventStream) int {
	n := 0
	for _, v := range fold(all, all[len(all)-1].Position) {
		n += v
	}
	return n
}

// appendItemAdded appends an item_added stream of cart-0 to log, after
// the streams of all, and returns all with it.
func appendItemAdded(t *testing.T, log *eventstore.Memory, all []factum.EventStream) []factum.EventStream {
	t.Helper()
	appendStreams(t, log, "", 1, 1)
	out, err := log.ReadLog(context.Background(), all[len(all)-1].Position, 1)
	if err != nil || len(out) != 1 {
		t.Fatalf("reading the appended stream: %v (%d streams)", err, len(out))
	}
	return append(all, out[0])
}

// checkReplayed checks that the model at the checkpoint is the log's end
// folded once, after calls calls of the function.
func (c *counts) checkReplayed(t *testing.T, st projection.Store, p *projection.Projection, all []factum.EventStream, calls int) {
	t.Helper()
	end := all[len(all)-1].Position
	pos, got := c.modelAt(t, st, p.Group())
	if want := fold(all, end); pos != end || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the replay the checkpoint is %v and the model %v, want %v and %v", pos, got, end, want)
	}
	if c.callCount() != calls {
		t.Errorf("the function was called %d times, want %d (the log, then its replay)", c.callCount(), calls)
	}
}

// A runner's own ResetAndReplay while it has read past streams it does not
// consume without saving: the replay starts at the log's beginning, not
// where the runner had read to, and applies every consumed stream again.
func resetWhileUnsaved(t *testing.T, st projection.Store) {
	log, all := appendMostlyUnwanted(t, 200, 23, "item_added")
	c := newCounts()
	p := c.projection(t, projection.From(cart))
	wanted := consumedCount(all)
	r := newRunner(t, p, projection.Config{Log: log, Store: st, BatchSize: 4, CheckpointInterval: time.Hour, Logger: quiet})
	runUntilCalls(t, r, c, wanted)
	if err := r.ResetAndReplay(context.Background()); err != nil {
		t.Fatal(err)
	}
	drain(t, r)
	c.checkReplayed(t, st, p, all, 2*wanted)
}

// Another runner's ResetAndReplay while a runner has read past streams it
// does not consume without saving: the runner finds the checkpoint moved
// when it next opens a transaction and reads on from it, so it replays the
// whole log, not only what follows where it had read to.
func resetByAnotherWhileUnsaved(t *testing.T, st projection.Store) {
	log, all := appendMostlyUnwanted(t, 200, 23, "item_added")
	c := newCounts()
	p := c.projection(t, projection.From(cart))
	wanted := consumedCount(all)
	cfg := projection.Config{Log: log, Store: st, BatchSize: 4, CheckpointInterval: time.Hour, Logger: quiet}
	r := newRunner(t, p, cfg)
	runUntilCalls(t, r, c, wanted)
	if err := newRunner(t, p, cfg).ResetAndReplay(context.Background()); err != nil {
		t.Fatal(err)
	}
	all = appendItemAdded(t, log, all)
	drain(t, r)
	c.checkReplayed(t, st, p, all, 2*wanted+1)
}
