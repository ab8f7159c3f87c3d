package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/factum-go/factum"
	"github.com/factum-go/factum/command"
	"github.com/factum-go/factum/engine"
	"github.com/factum-go/factum/eventstore"
	"github.com/factum-go/factum/saga"
)

// Shutdown lets the work already accepted run to its end: commands sent
// just before it are processed, the saga reacting to their events may still
// send its commands, and those are processed too, all well within the
// deadline. Clients are refused from the first moment.
func TestShutdownFinishesWhatSagasSetOff(t *testing.T) {
	store := eventstore.NewMemory()
	rt, _ := newRuntime(t, engine.Config{Store: store, Sagas: []*saga.Saga{mirrorSaga()}}, nil)
	ctx := context.Background()
	const n = 50
	for i := range n {
		if _, err := rt.Gateway().Send(ctx, factum.NewCommand(counters.WithID(fmt.Sprint("src-", i)), Add{N: 1})); err != nil {
			t.Fatal(err)
		}
	}
	shutdownWellWithin(t, rt, ": it waited for its deadline")
	mirror, err := store.Load(ctx, counters.WithID("mirror"), 1, eventstore.MaxVersion)
	if err != nil {
		t.Fatal(err)
	}
	if len(mirror) != n {
		t.Fatalf("the mirror has %d streams, want one per source command (%d): saga commands were lost", len(mirror), n)
	}
	_, err = rt.Gateway().Send(ctx, factum.NewCommand(counters.WithID("late"), Add{N: 1}))
	if !errors.Is(err, command.ErrClosed) || factum.CodeOf(err) != factum.CodeTooManyRequests {
		t.Fatalf("a client's command after Shutdown: %v, want TooManyRequests wrapping ErrClosed", err)
	}
}

// Streams another instance keeps appending to the same store do not hold
// a shutdown: they are that instance's work, taken up after a restart.
func TestShutdownIsNotHeldByAnotherInstancesAppends(t *testing.T) {
	store := eventstore.NewMemory()
	rt, _ := newRuntime(t, engine.Config{Store: store, Sagas: []*saga.Saga{mirrorSaga()}}, nil)
	other, _ := newRuntime(t, engine.Config{Store: store}, nil)
	ctx := context.Background()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := other.Gateway().SendAndWait(ctx, factum.NewCommand(counters.WithID(fmt.Sprint("other-", i%7)), Add{N: 0}), processed()); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	time.Sleep(20 * time.Millisecond)
	shutdownWellWithin(t, rt, " while another instance appended")
}

// shutdownWellWithin shuts rt down with a deadline of 20 seconds and fails
// the test when the shutdown fails or takes more than half of it, saying
// why it took long.
func shutdownWellWithin(t *testing.T, rt *engine.Engine, why string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("Shutdown took %v%s", took, why)
	}
}
