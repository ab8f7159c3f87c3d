package eventstore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/factum-go/factum"
)

// heldWaiter is a LogWaiter whose waits last until release is closed or
// their context ends, counting the waits it is asked for.
type heldWaiter struct {
	calls   atomic.Int64
	release chan struct{}
}

func (h *heldWaiter) WaitLog(ctx context.Context, _ factum.Position, woken <-chan struct{}) error {
	h.calls.Add(1)
	select {
	case <-h.release:
		return nil
	case <-woken:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Readers waiting at the same position share one backend wait and all
// return when it does.
func TestSharedWaitOneBackendWaitPerPosition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &heldWaiter{release: make(chan struct{})}
		var s sharedWait
		pos := factum.Position{Seq: 7}
		const readers = 6
		errs := make(chan error, readers)
		for range readers {
			go func() { errs <- s.wait(context.Background(), h, pos, nil) }()
		}
		synctest.Wait()
		if got := h.calls.Load(); got != 1 {
			t.Fatalf("%d readers at one position made %d backend waits, want 1", readers, got)
		}
		close(h.release)
		for range readers {
			if err := <-errs; err != nil {
				t.Errorf("wait: %v", err)
			}
		}
	})
}

// When the shared wait ends on its own caller's context, the others do
// not return with that error: one of them waits on, for them all.
func TestSharedWaitOutlivesItsLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &heldWaiter{release: make(chan struct{})}
		var s sharedWait
		pos := factum.Position{Seq: 3}
		leader, stop := context.WithCancel(context.Background())
		first := make(chan error, 1)
		go func() { first <- s.wait(leader, h, pos, nil) }()
		synctest.Wait()
		var wg sync.WaitGroup
		others := make(chan error, 3)
		for range 3 {
			wg.Go(func() { others <- s.wait(context.Background(), h, pos, nil) })
		}
		synctest.Wait()
		stop()
		if err := <-first; !errors.Is(err, context.Canceled) {
			t.Fatalf("the leader's wait: %v, want its context's error", err)
		}
		synctest.Wait()
		if got := h.calls.Load(); got != 2 {
			t.Fatalf("backend waits: %d, want 2 (the leader's, then one for the rest)", got)
		}
		close(h.release)
		wg.Wait()
		close(others)
		for err := range others {
			if err != nil {
				t.Errorf("a joiner returned %v after its leader's context ended", err)
			}
		}
	})
}

// A closed woken channel releases a joiner at once, as it does the backend
// wait.
func TestSharedWaitJoinerWokenByAppend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &heldWaiter{release: make(chan struct{})}
		var s sharedWait
		pos := factum.Position{Seq: 1}
		go func() { _ = s.wait(context.Background(), h, pos, nil) }()
		synctest.Wait()
		woken := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- s.wait(context.Background(), h, pos, woken) }()
		synctest.Wait()
		close(woken)
		if err := <-done; err != nil {
			t.Errorf("woken joiner: %v", err)
		}
		close(h.release)
		synctest.Wait()
	})
}

// panickyWaiter's first wait panics once release is closed; later waits
// return at once.
type panickyWaiter struct {
	first   atomic.Bool
	release chan struct{}
}

func (p *panickyWaiter) WaitLog(context.Context, factum.Position, <-chan struct{}) error {
	if p.first.CompareAndSwap(false, true) {
		<-p.release
		panic("backend wait panicked")
	}
	return nil
}

// A shared wait whose backend wait panics (and whose caller recovers)
// ends: the readers waiting for it wait on, and later waits are not left
// waiting for it.
func TestSharedWaitThatPanicsEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &panickyWaiter{release: make(chan struct{})}
		var s sharedWait
		pos := factum.Position{Seq: 7}
		go func() {
			defer func() { _ = recover() }()
			_ = s.wait(context.Background(), p, pos, nil)
		}()
		synctest.Wait()
		errs := make(chan error, 1)
		go func() { errs <- s.wait(context.Background(), p, pos, nil) }()
		synctest.Wait()
		close(p.release)
		if err := <-errs; err != nil {
			t.Fatalf("the waiting reader: %v", err)
		}
		if err := s.wait(context.Background(), p, pos, nil); err != nil {
			t.Fatalf("a later wait: %v", err)
		}
	})
}

// slowWaiter is a LogWaiter that notices a wake-up only once release is
// closed (a backend slow to return after an append woke it).
type slowWaiter struct{ release chan struct{} }

func (w slowWaiter) WaitLog(ctx context.Context, _ factum.Position, woken <-chan struct{}) error {
	select {
	case <-woken:
		<-w.release
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A reader that joins a shared wait after an append has already woken its
// leader does not return with the leader's nil: that wake-up is older than
// the reader's call, and the reader (a consumer that has read the log's
// end) would read an empty page and wait again, a spin. It waits on, until
// its own wake-up or its context's end. On the old code it returned nil
// (TestEventStoreLogHeldTransaction saw WaitLog return while nothing was
// readable, when it joined the consumer's wait in that window).
func TestSharedWaitJoinerIgnoresAnOlderWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := slowWaiter{release: make(chan struct{})}
		var s sharedWait
		pos := factum.Position{Seq: 4}
		before := make(chan struct{}) // the epoch the leader began in
		lead := make(chan error, 1)
		go func() { lead <- s.wait(context.Background(), w, pos, before) }()
		synctest.Wait()
		close(before) // an append returns: the leader is being woken
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		join := make(chan error, 1)
		go func() { join <- s.wait(ctx, w, pos, make(chan struct{})) }()
		synctest.Wait()
		close(w.release)
		if err := <-lead; err != nil {
			t.Fatalf("the woken leader: %v", err)
		}
		if err := <-join; !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a reader joining after the wake-up returned %v, want its context's deadline", err)
		}
	})
}
