package projectiontest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/internal/kit"
	"github.com/factum-go/factum/projection"
)

// skipped are the cases of streams the projection does not consume.
var skipped = []kit.Case[projection.Store]{
	{Name: "UnwantedBatchesCommitNothing", Run: unwantedBatchesCommitNothing},
	{Name: "ExactlyOnceAcrossKillsAmidUnwantedBatches", Run: exactlyOnceAcrossKillsAmidUnwanted},
	{Name: "ARebuildOverUnwantedBatchesSwitches", Run: rebuildOverUnwanted},
	{Name: "AnIdleRunnerSavesItsProgressWithinTheInterval", Run: idleRunnerSaves},
	{Name: "AResetWhileProgressIsUnsavedReplaysTheLog", Run: resetWhileUnsaved},
	{Name: "AResetByAnotherRunnerWhileProgressIsUnsavedReplaysTheLog", Run: resetByAnotherWhileUnsaved},
}

var note = factum.NamedAggregate{Context: "shop", Aggregate: "note"}

// cartIDs are the carts of appendMostlyUnwanted's log.
var cartIDs = []string{"cart-0", "cart-1", "cart-2", "cart-3", "cart-4"}

// appendMostlyUnwanted appends n streams to a new memory store: one in
// wantEvery (the wantEvery/2-th) an item_added of a cart (what the
// projection consumes),
// the others a cart_viewed of a cart (an event it does not consume) or an
// noteEvent of a note (for a projection From carts, an aggregate type it
// does not consume).
func appendMostlyUnwanted(t *testing.T, n, wantEvery int, noteEvent string) (*eventstore.Memory, []factum.EventStream) {
	t.Helper()
	store := eventstore.NewMemory()
	versions := map[factum.AggregateID]int{}
	var all []factum.EventStream
	for i := range n {
		id, name := cart.WithID(cartIDs[i%len(cartIDs)]), "cart_viewed"
		switch {
		case i%wantEvery == wantEvery/2:
			name = "item_added"
		case i%2 == 0:
			id, name = note.WithID(fmt.Sprintf("note-%d", i%3)), noteEvent
		}
		versions[id]++
		s := factum.EventStream{
			ID: factum.NewID(), AggregateID: id, Version: versions[id], CommandID: factum.NewID(),
			RequestID: factum.NewID(), CreateTime: time.Now(),
			Events: []factum.DomainEvent{{ID: factum.NewID(), Name: name, Sequence: 1, IsLast: true, Body: json.RawMessage(`{}`)}},
		}
		if err := store.Append(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
		all = append(all, s)
	}
	return store, all
}

// fold returns the kit's model of the streams up to pos: the carts'
// item_added streams per cart.
func fold(all []factum.EventStream, pos factum.Position) map[string]int {
	out := map[string]int{}
	for _, id := range cartIDs {
		out[id] = 0
	}
	for _, s := range all {
		if pos.Less(s.Position) {
			break
		}
		if s.AggregateID.NamedAggregate == cart && s.Events[0].Name == "item_added" {
			out[s.AggregateID.ID]++
		}
	}
	return out
}

// modelAt reads the checkpoint and the model in one transaction (each
// committed with the other).
func (c *counts) modelAt(t *testing.T, st projection.Store, group factum.Function) (factum.Position, map[string]int) {
	t.Helper()
	var pos factum.Position
	out := c.readAfter(t, st, cartIDs, func(tx projection.Txn) {
		var err error
		if pos, err = tx.Checkpoint(context.Background(), group); err != nil {
			t.Fatal(err)
		}
	})
	return pos, out
}

// Batches holding no stream the projection consumes commit no
// transaction: a log of 400 streams, one in 50 consumed, read 4 at a time
// (100 batches, 8 with a consumed stream, the last 6 without) commits the
// setup and the 8 batches, and a drain afterwards commits its setup and
// one save at the log's end.
func unwantedBatchesCommitNothing(t *testing.T, st projection.Store) {
	log, all := appendMostlyUnwanted(t, 400, 50, "item_added")
	c := newCounts()
	p := c.projection(t, projection.From(cart))
	const batch, wanted, lastWanted = 4, 8, 375
	cfg := projection.Config{Log: log, BatchSize: batch, CheckpointInterval: time.Hour, Logger: quiet}

	d := &dyingStore{Store: st, budget: -1}
	cfg.Store = d
	// Stopped a while after it applied the last consumed stream, when it
	// has read on to the log's end.
	runUntilCalls(t, newRunner(t, p, cfg), c, wanted)
	if commits, saves := d.counted(); commits != 1+wanted || saves != wanted {
		t.Errorf("%d transactions committed, %d checkpoints saved over 100 batches of which %d hold a consumed stream: want %d and %d",
			commits, saves, wanted, 1+wanted, wanted)
	}
	pos, got := c.modelAt(t, st, p.Group())
	if want := all[lastWanted/batch*batch+batch-1].Position; pos != want {
		t.Errorf("the checkpoint is at %v, want %v (the batch of the last consumed stream)", pos, want)
	}
	if want := fold(all, pos); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("at checkpoint %v the model is %v, want %v", pos, got, want)
	}

	d = &dyingStore{Store: st, budget: -1}
	cfg.Store = d
	drain(t, newRunner(t, p, cfg))
	if commits, saves := d.counted(); commits != 2 || saves != 1 {
		t.Errorf("a drain over 6 batches of unconsumed streams committed %d transactions saving %d checkpoints, want 2 (the setup's, the save at the end) and 1",
			commits, saves)
	}
	end := all[len(all)-1].Position
	pos, got = c.modelAt(t, st, p.Group())
	if pos != end {
		t.Errorf("after the drain the checkpoint is %v, want the log's end %v", pos, end)
	}
	if want := fold(all, end); fmt.Sprint(got) != fmt.Sprint(want) || c.callCount() != wanted {
		t.Errorf("the model is %v after %d calls, want %v after %d", got, c.callCount(), want, wanted)
	}
}

// quiet discards the runners' logs of the kills' errors.
var quiet = slog.New(slog.DiscardHandler)

func (c *counts) callCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// A runner over a log mostly of streams it does not consume, killed
// (every call after a random one fails, nothing of the transaction in
// hand commits, nothing is saved on the way out; or stopped at a random
// moment) twenty times, with
// checkpoint intervals from every batch to never: after each kill the
// model equals the log up to the checkpoint folded once (no consumed
// stream lost, none applied twice), the checkpoint never moves back, and
// after the last restart the model holds the whole log.
func exactlyOnceAcrossKillsAmidUnwanted(t *testing.T, st projection.Store) {
	log, all := appendMostlyUnwanted(t, 600, 23, "item_added")
	c := newCounts()
	p := c.projection(t, projection.From(cart))
	rng := rand.New(rand.NewPCG(3, 4))
	intervals := []time.Duration{-1, time.Millisecond, 0, time.Hour}
	// The tables first (a runner over an empty log), so that every kill
	// leaves a model to read.
	drain(t, newRunner(t, p, projection.Config{Log: eventstore.NewMemory(), Store: st}))
	var last factum.Position
	for round := range 20 {
		d := &dyingStore{Store: st, budget: rng.IntN(80)}
		r := newRunner(t, p, projection.Config{Log: log, Store: d, BatchSize: 1 + rng.IntN(12),
			CheckpointInterval: intervals[round%len(intervals)], Logger: quiet})
		// Killed when the budget runs out, or at a random moment (after
		// which it may also have been idle at the log's end).
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+rng.IntN(40))*time.Millisecond)
		go func() {
			for ctx.Err() == nil && !d.isDead() {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_ = r.Run(ctx)
		cancel()
		pos, got := c.modelAt(t, st, p.Group())
		if want := fold(all, pos); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: at checkpoint %v the model is %v, want %v", round, pos, got, want)
		}
		if pos.Less(last) {
			t.Fatalf("round %d: the checkpoint moved back from %v to %v", round, last, pos)
		}
		last = pos
	}
	drain(t, newRunner(t, p, projection.Config{Log: log, Store: st, BatchSize: 7}))
	pos, got := c.modelAt(t, st, p.Group())
	if want := fold(all, all[len(all)-1].Position); fmt.Sprint(got) != fmt.Sprint(want) || pos != all[len(all)-1].Position {
		t.Errorf("at the end the checkpoint is %v and the model %v, want %v and %v", pos, got, all[len(all)-1].Position, want)
	}
}

// A rebuild over a log the projection mostly does not consume, with
// checkpoints over such streams saved only when due (never, by the
// interval): the next build saves its checkpoint when it catches up with
// the live one, so the switch happens, and the new build holds the log.
func rebuildOverUnwanted(t *testing.T, st projection.Store) {
	log, _ := appendMostlyUnwanted(t, 400, 50, "note_written")
	c := newTCounts("skip_rebuild")
	p := c.projection(t, 1)
	cfg := projection.Config{Log: log, Store: st, BatchSize: 4, CheckpointInterval: time.Hour}
	drain(t, newRunner(t, p, cfg))
	r := newRunner(t, p, cfg)
	if err := r.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if s, err := st.State(ctx, "skip_rebuild"); err == nil && s.Live.Number == 2 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_ = r.Run(ctx)
	if s := state(t, st, "skip_rebuild"); s.Live.Number != 2 {
		t.Fatalf("a minute after the rebuild started the state is %+v, want build 2 live", s)
	}
	got, res := all(t, r, factum.DefaultTenant)
	if want := recompute(t, log, factum.DefaultTenant, 1); res.Build != 2 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the switch build %d answers %v, want build 2 answering %v", res.Build, got, want)
	}
}

// A runner idle at the log's end, with its progress over the last batch
// (which holds no stream it consumes) unsaved, saves it once the
// checkpoint interval has passed, without a drain and long before its
// next poll: Status then reports no lag.
func idleRunnerSaves(t *testing.T, st projection.Store) {
	log, all := appendMostlyUnwanted(t, 200, 23, "item_added")
	c := newCounts()
	p := c.projection(t, projection.From(cart))
	r := newRunner(t, p, projection.Config{Log: log, Store: st, BatchSize: 4, PollInterval: time.Hour,
		CheckpointInterval: 50 * time.Millisecond, Logger: quiet})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Run(ctx)
	}()
	end := all[len(all)-1].Position
	var s projection.Status
	for ctx.Err() == nil {
		var err error
		if s, err = r.Status(ctx); err == nil && s.Live.Checkpoint == end && s.Live.Lag == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if s.Live == nil || s.Live.Checkpoint != end || s.Live.Lag != 0 {
		t.Fatalf("a minute into an idle run the status is %+v, want the checkpoint at the log's end %v and no lag", s.Live, end)
	}
}
