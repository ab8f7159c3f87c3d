package command

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factum-go/factum"
)

// TestWaitersReuseDropsLateSignals: a waiter is reused after its wait
// ends; a signal for the ended wait must not reach the wait now using it.
func TestWaitersReuseDropsLateSignals(t *testing.T) {
	w := NewWaiters()
	a, err := w.register("cmd-a")
	if err != nil {
		t.Fatal(err)
	}
	w.remove("cmd-a", a)
	b, err := w.register("cmd-b")
	if err != nil {
		t.Fatal(err)
	}
	defer w.remove("cmd-b", b)
	// Deliver to the waiter object directly, as a Signal that looked it up
	// before the first wait ended would.
	late := factum.Signal{CommandID: "cmd-a", Stage: factum.StageProcessed}
	w.deliver(a, late)
	w.deliver(b, late)
	w.Signal(late)
	if got := b.drain(nil); len(got) != 0 {
		t.Fatalf("wait for cmd-b got %d signals of cmd-a", len(got))
	}
	w.Signal(factum.Signal{CommandID: "cmd-b", Stage: factum.StageProcessed})
	got := b.drain(nil)
	if len(got) != 1 || got[0].CommandID != "cmd-b" {
		t.Fatalf("wait for cmd-b got %+v, want its one signal", got)
	}
	if n := w.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1", n)
	}
}

// TestWaitersConcurrentReuse runs many short waits while signals for
// ended waits keep arriving: every wait must see its own signal and only
// its own.
func TestWaitersConcurrentReuse(t *testing.T) {
	w := NewWaiters()
	var seq atomic.Int64
	var stale sync.Map // command IDs of ended waits
	stop := make(chan struct{})
	var noise sync.WaitGroup
	for range 4 {
		noise.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				stale.Range(func(k, _ any) bool {
					w.Signal(factum.Signal{CommandID: k.(string), Stage: factum.StageProcessed})
					return true
				})
			}
		})
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 500 {
				id := "cmd-" + strconv.FormatInt(seq.Add(1), 10)
				wt, err := w.register(id)
				if err != nil {
					t.Error(err)
					return
				}
				done := make(chan struct{})
				go func() {
					w.Signal(factum.Signal{CommandID: id, Stage: factum.StageProcessed, AggregateVersion: 1})
					close(done)
				}()
				exp := wt.expiry(5 * time.Second)
				got := 0
				for got == 0 {
					select {
					case <-wt.notify:
					case <-exp:
						t.Errorf("wait for %s timed out", id)
						w.remove(id, wt)
						return
					}
					for _, s := range wt.drain(nil) {
						if s.CommandID != id {
							t.Errorf("wait for %s received a signal of %s", id, s.CommandID)
						}
						got++
					}
				}
				<-done
				w.remove(id, wt)
				stale.Store(id, true)
			}
		})
	}
	wg.Wait()
	close(stop)
	noise.Wait()
	if n := w.Len(); n != 0 {
		t.Fatalf("%d waits left behind", n)
	}
}
