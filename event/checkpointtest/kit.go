// Package checkpointtest is the contract kit for event.CheckpointStore:
// every implementation, in factum or outside it, proves itself by calling
// [Run] from a test.
package checkpointtest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/event"
)

// Run checks the event.CheckpointStores newStore returns: round trips in
// (tx, seq) order, never moving backwards under concurrent saves,
// isolation of groups, refusal of bad input and cancellation. The memory,
// SQLite and PostgreSQL stores run it. Its cases run in parallel
// (t.Parallel), each on groups of its own, and newStore is called from
// several goroutines.
func Run(t *testing.T, newStore func(*testing.T) event.CheckpointStore) {
	t.Helper()
	ctx := context.Background()
	pos := func(tx, seq uint64) factum.Position { return factum.Position{Tx: tx, Seq: seq} }
	group := func(t *testing.T) factum.Function {
		return factum.Function{Context: "shop", Processor: "p_" + factum.DeriveID(t.Name(), factum.NewID())[:8], Name: "on_item_added"}
	}
	expect := func(t *testing.T, st event.CheckpointStore, g factum.Function, want factum.Position) {
		t.Helper()
		got, err := st.Checkpoint(ctx, g)
		if err != nil {
			t.Fatalf("Checkpoint(%s): %v", g, err)
		}
		if got != want {
			t.Fatalf("Checkpoint(%s) = %s, want %s", g, got, want)
		}
	}
	save := func(t *testing.T, st event.CheckpointStore, g factum.Function, p factum.Position) {
		t.Helper()
		if err := st.SaveCheckpoint(ctx, g, p); err != nil {
			t.Fatalf("SaveCheckpoint(%s, %s): %v", g, p, err)
		}
	}

	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		st, g := newStore(t), group(t)
		expect(t, st, g, factum.Position{})
		steps := []struct{ save, want factum.Position }{
			{pos(0, 5), pos(0, 5)},
			{pos(0, 5), pos(0, 5)},         // equal: no change
			{pos(0, 4), pos(0, 5)},         // behind: ignored
			{pos(3, 1), pos(3, 1)},         // a later transaction, a lower sequence
			{pos(2, 1_000_000), pos(3, 1)}, // an earlier transaction, whatever its sequence
			{pos(3, 9), pos(3, 9)},         // same transaction, further on
			{factum.Position{}, pos(3, 9)}, // the zero position
			{pos(math.MaxInt64, 1), pos(math.MaxInt64, 1)},
			{pos(math.MaxInt64, math.MaxInt64), pos(math.MaxInt64, math.MaxInt64)},
		}
		for _, s := range steps {
			save(t, st, g, s.save)
			expect(t, st, g, s.want)
		}
	})

	t.Run("NeverBackwardsUnderConcurrentSaves", func(t *testing.T) {
		t.Parallel()
		st, g := newStore(t), group(t)
		const n, workers = 400, 16
		// Positions in log order: a few transactions of many sequences.
		positions := make([]factum.Position, n)
		for i := range positions {
			positions[i] = pos(uint64(1+i/50), uint64(1000-i%50))
			if i%50 > 0 {
				positions[i].Seq = positions[i-1].Seq + uint64(1+i%3)
			}
		}
		order := rand.Perm(n)
		next := make(chan int)
		var wg sync.WaitGroup
		errs := make(chan error, workers+1)
		for range workers {
			wg.Go(func() {
				for i := range next {
					if err := st.SaveCheckpoint(ctx, g, positions[i]); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		stop := make(chan struct{})
		var readers sync.WaitGroup
		readers.Go(func() {
			var last factum.Position
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := st.Checkpoint(ctx, g)
				if err != nil {
					errs <- err
					return
				}
				if got.Less(last) {
					errs <- errors.New("checkpoint moved back from " + last.String() + " to " + got.String())
					return
				}
				last = got
			}
		})
		for _, i := range order {
			next <- i
		}
		close(next)
		wg.Wait()
		close(stop)
		readers.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		expect(t, st, g, positions[n-1])
	})

	t.Run("GroupsIsolated", func(t *testing.T) {
		t.Parallel()
		st, g := newStore(t), group(t)
		others := []factum.Function{
			{Context: "billing", Processor: g.Processor, Name: g.Name},
			{Context: g.Context, Processor: g.Processor + "_x", Name: g.Name},
			{Context: g.Context, Processor: g.Processor, Name: g.Name + "_x"},
			{Context: g.Context, Processor: g.Processor}, // a processor's group: no function name
		}
		save(t, st, g, pos(0, 10))
		for i, o := range others {
			expect(t, st, o, factum.Position{})
			save(t, st, o, pos(0, uint64(i+1)))
		}
		expect(t, st, g, pos(0, 10))
		for i, o := range others {
			expect(t, st, o, pos(0, uint64(i+1)))
		}
	})

	t.Run("BadInputRefused", func(t *testing.T) {
		t.Parallel()
		st, g := newStore(t), group(t)
		for _, bad := range []factum.Function{
			{},
			{Context: "shop"},
			{Context: "shop", Name: "f"},
			{Context: "has space", Processor: "p"},
			{Context: "shop", Processor: "p/q"},
			{Context: "shop", Processor: "p", Name: "1st"},
		} {
			if _, err := st.Checkpoint(ctx, bad); !errors.Is(err, factum.ErrIllegalArgument) {
				t.Errorf("Checkpoint(%+v): %v, want IllegalArgument", bad, err)
			}
			if err := st.SaveCheckpoint(ctx, bad, pos(0, 1)); !errors.Is(err, factum.ErrIllegalArgument) {
				t.Errorf("SaveCheckpoint(%+v): %v, want IllegalArgument", bad, err)
			}
		}
		for _, p := range []factum.Position{pos(math.MaxInt64+1, 0), pos(0, math.MaxUint64)} {
			if err := st.SaveCheckpoint(ctx, g, p); !errors.Is(err, factum.ErrIllegalArgument) {
				t.Errorf("SaveCheckpoint at %s: %v, want IllegalArgument", p, err)
			}
		}
		expect(t, st, g, factum.Position{})
	})

	t.Run("CancelledContext", func(t *testing.T) {
		t.Parallel()
		st, g := newStore(t), group(t)
		save(t, st, g, pos(0, 3))
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if err := st.SaveCheckpoint(cancelled, g, pos(0, 9)); !errors.Is(err, context.Canceled) {
			t.Errorf("SaveCheckpoint with a cancelled context: %v, want context.Canceled", err)
		}
		if _, err := st.Checkpoint(cancelled, g); !errors.Is(err, context.Canceled) {
			t.Errorf("Checkpoint with a cancelled context: %v, want context.Canceled", err)
		}
		expect(t, st, g, pos(0, 3))
	})
}
